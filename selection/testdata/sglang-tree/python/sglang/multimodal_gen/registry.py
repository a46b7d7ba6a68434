import importlib
import pkgutil


def _discover_and_register_pipelines():
    package = importlib.import_module("sglang.multimodal_gen.runtime.pipelines")
    for _, module_name, ispkg in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        importlib.import_module(module_name)

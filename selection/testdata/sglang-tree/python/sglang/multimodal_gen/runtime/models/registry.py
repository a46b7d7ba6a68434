import importlib


class _LazyRegisteredModel:
    def load_model_cls(self):
        return importlib.import_module(self.module_name)

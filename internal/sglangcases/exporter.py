"""diffusion-check's exporter of SGLang's diffusion test cases.

Run by `diffusion-check sglang-suite` with SGLang's interpreter and SGLang's python/ first on
sys.path. It imports gpu_cases.py as SGLang's harness does, so that its replace() calls,
helpers and platform conditionals run as they do in SGLang's CI, and prints every case's
dataclass fields as one JSON document on stdout, and only that. It loads no model and opens
no network connection of its own; the caller hides the GPUs and sets the Hugging Face
libraries offline.

Exit status: 0 with the JSON on stdout; 3 when a module is missing (its name on stderr, as
"missing module: NAME"); 4 when the import failed otherwise or a list is not a list of cases
(the reason on stderr).
"""

import dataclasses
import importlib
import json
import os
import sys
import traceback
from pathlib import PurePath

GPU_CASES = "sglang.multimodal_gen.test.server.gpu_cases"
CONFIGS = "sglang.multimodal_gen.test.server.testcase_configs"
TEST_UTILS = "sglang.multimodal_gen.test.test_utils"
CI_DATA = {
    "repo": "SGL_TEST_FILES_CI_DATA_REPO",
    "revision": "SGL_TEST_FILES_CI_DATA_REVISION",
    "root": "SGL_TEST_FILES_CONSISTENCY_GT_ROOT",
}


class ExportError(Exception):
    pass


def plain(value, where):
    """The JSON form of a field's value: dataclasses as objects of their fields."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name), where + "." + f.name) for f in dataclasses.fields(value)}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ExportError("%s: %r is not a JSON number" % (where, value))
        return value
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ExportError("%s: key %r is not a string" % (where, k))
            out[k] = plain(v, where + "." + k)
        return out
    if isinstance(value, (list, tuple)):
        return [plain(v, "%s[%d]" % (where, i)) for i, v in enumerate(value)]
    if isinstance(value, (set, frozenset)):
        return sorted(plain(v, where) for v in value)
    raise ExportError("%s: a %s (%r) has no JSON form" % (where, type(value).__name__, value))


def field_names(cls):
    return [f.name for f in dataclasses.fields(cls)]


def main(argv):
    wanted = [n for n in argv[1].split(",") if n] if len(argv) > 1 else []
    # SGLang's modules may print while they load (a tolerance profile, a platform note): the
    # JSON is the only thing on stdout, so fd 1 points at stderr until it is written.
    real_stdout = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        try:
            cases_module = importlib.import_module(GPU_CASES)
            configs = importlib.import_module(CONFIGS)
        except ModuleNotFoundError as e:
            sys.stderr.write("missing module: %s\n" % (e.name or e))
            return 3
        except BaseException:
            sys.stderr.write("import failed:\n" + traceback.format_exc())
            return 4
        case_cls = configs.DiffusionTestCase
        lists, seen, available = [], {}, []
        for name, value in vars(cases_module).items():
            if name.startswith("_") or not isinstance(value, list):
                continue
            if not value or not all(isinstance(c, case_cls) for c in value):
                continue
            available.append(name)
            if wanted and name not in wanted:
                continue
            if id(value) in seen:
                lists.append({"name": name, "alias_of": seen[id(value)], "cases": []})
                continue
            seen[id(value)] = name
            lists.append({"name": name, "cases": [plain(c, "%s[%s]" % (name, c.id)) for c in value]})
        missing = [n for n in wanted if n not in available]
        if missing:
            sys.stderr.write("not a list of DiffusionTestCase in %s: %s (the lists: %s)\n"
                             % (GPU_CASES, ", ".join(missing), ", ".join(available) or "none"))
            return 4
        ci_data = {}
        try:
            utils = importlib.import_module(TEST_UTILS)
            for key, attr in CI_DATA.items():
                if isinstance(getattr(utils, attr, None), str):
                    ci_data[key] = getattr(utils, attr)
        except ImportError:
            pass
        doc = {
            "python": sys.version.split()[0],
            "gpu_cases": os.path.abspath(cases_module.__file__),
            "ci_data": ci_data,
            "fields": {
                "DiffusionTestCase": field_names(case_cls),
                "DiffusionServerArgs": field_names(configs.DiffusionServerArgs),
                "DiffusionSamplingParams": field_names(configs.DiffusionSamplingParams),
            },
            "lists": lists,
        }
        text = json.dumps(doc, allow_nan=False)
    except ExportError as e:
        sys.stderr.write("%s\n" % e)
        return 4
    finally:
        sys.stdout.flush()
        os.dup2(real_stdout, 1)
        sys.stdout = sys.__stdout__
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

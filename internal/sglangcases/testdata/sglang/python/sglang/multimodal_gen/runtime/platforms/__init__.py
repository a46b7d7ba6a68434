"""A stand-in for SGLang's platform module: the platform comes from FAKE_SGLANG_PLATFORM."""

import os


class _Platform:
    def is_hip(self):
        return os.environ.get("FAKE_SGLANG_PLATFORM") == "hip"


current_platform = _Platform()

"""Install-time build of the compiled core's ahead-of-time extensions (scopa_env/fast/aot.py).

Everything else is in pyproject.toml. A failed build (no C compiler, say) only warns: the
package then compiles those kernels on first use, as it does for everything else.
"""

import os
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
# aot.EXTENSIONS (tests/test_aot.py holds them equal)
EXTENSIONS = ("plain", "opponents", "heuristic", "observe", "search")


class AheadOfTime(build_ext):
    """Builds each ``scopa_env.fast._aot_*`` extension with numba.pycc instead of a C compiler
    run over sources."""

    def build_extension(self, ext: Extension) -> None:
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        name = ext.name.rsplit("._aot_", 1)[1]
        cpu = os.environ.get("SCOPA_AOT_CPU", "host")  # "generic" for a wheel other machines use
        # In a subprocess: LLVM aborts the process on some errors, which no except could catch.
        code = "import sys; from scopa_env.fast import aot_build; print(aot_build.build_one(*sys.argv[1:]))"
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        done = subprocess.run(
            [sys.executable, "-c", code, name, str(target.parent), cpu], env=env, capture_output=True, text=True
        )
        built = Path(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 and done.stdout.strip() else None
        if built is None or not built.is_file():
            why = (done.stderr.strip().splitlines() or ["no output"])[-1]
            print(
                f"warning: ahead-of-time build of {ext.name} skipped ({why}); "
                "the compiled core compiles it on first use instead",
                file=sys.stderr,
            )
            target.write_bytes(b"")  # an empty file fails to import: the JIT takes over
        elif built != target:
            built.replace(target)


setup(
    ext_modules=[Extension(f"scopa_env.fast._aot_{name}", sources=[]) for name in EXTENSIONS],
    cmdclass={"build_ext": AheadOfTime},
)

"""The package's surface: the checked-in stubs are what nanobind's stubgen makes of the module,
and every public name has a docstring."""

import inspect
import pathlib
import subprocess
import sys

import sieve


def test_stubs_are_current(tmp_path):
    out = tmp_path / "_sieve.pyi"
    subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-P", "-m", "sieve._sieve",
                    "-o", str(out)], check=True)
    checked_in = pathlib.Path(sieve.__file__).with_name("_sieve.pyi")
    assert out.read_text() == checked_in.read_text(), (
        "python/sieve/_sieve.pyi is stale: regenerate it with "
        "python -m nanobind.stubgen -P -m sieve._sieve -o python/sieve/_sieve.pyi")


def test_every_public_call_has_a_docstring():
    missing = []
    for name in sieve.__all__:
        obj = getattr(sieve, name)
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_") and attr not in ("__init__",):
                    continue
                if callable(member) or isinstance(member, property):
                    doc = (getattr(member, "__doc__", "") or "").strip()
                    if not doc and attr != "__init__":
                        missing.append(name + "." + attr)
    assert not missing, missing

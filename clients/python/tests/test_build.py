"""The distribution: `python -m build` makes an sdist and a wheel, and the
wheel installs into a fresh virtualenv, imports, and talks to the server.
Set WFD_SKIP_BUILD=1 to skip it (it takes 15-20 s)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SMOKE = """
import sys
import wfd_client, wfd.v1.service_pb2
assert "site-packages" in wfd_client.__file__, wfd_client.__file__
assert "site-packages" in wfd.v1.service_pb2.__file__
with wfd_client.Client(sys.argv[1]) as c:
    h = c.run("echo", {"from": "wheel"})
    recs = list(c.stream(h.handler_id, include_internal=True))
    print(wfd_client.struct_to_dict(recs[-1].handler_finished.result))
"""


def _run(*args: str | Path, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    p = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True)
    assert p.returncode == 0, f"{args} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}"
    return p.stdout


@pytest.mark.skipif(os.environ.get("WFD_SKIP_BUILD") == "1", reason="WFD_SKIP_BUILD=1")
def test_wheel_installs_into_a_fresh_venv(tmp_path: Path, server: str) -> None:
    dist = tmp_path / "dist"
    _run(sys.executable, "-m", "build", "--outdir", dist, ROOT, cwd=tmp_path)
    wheels = list(dist.glob("wfd_client-*-py3-none-any.whl"))
    assert len(wheels) == 1 and list(dist.glob("wfd_client-*.tar.gz"))
    names = set(zipfile.ZipFile(wheels[0]).namelist())
    for want in ("wfd_client/__init__.py", "wfd_client/py.typed", "wfd/v1/service_pb2.py",
                 "wfd/v1/service_pb2.pyi", "wfd/v1/service_pb2_grpc.py", "wfd/v1/py.typed"):
        assert want in names
    assert not any(n.startswith(("wfd/__init__", "tests/", "src/", "gen/")) for n in names)

    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    py = venv / "bin" / "python"
    _run(py, "-m", "pip", "install", "-q", "--disable-pip-version-check", wheels[0], cwd=tmp_path)
    out = _run(py, "-c", SMOKE, server, cwd=tmp_path)
    assert out.strip() == "{'from': 'wheel'}"

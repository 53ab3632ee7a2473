"""run_contained under bubblewrap and without it: what is cut, what is limited, what is killed."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from sandbox_helpers import needs_bwrap, tempfile_dir

from ctxbench.harness.sandbox import jail, launch, limits as limits_module
from ctxbench.harness.cli import cli
from ctxbench.harness.sandbox import ResourceLimits, Sandbox, bwrap_available, process_limit_mechanism, run_contained
from ctxbench.harness.sandbox.procs import descendants
from ctxbench.harness.environments import testenv

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def scratch(tmp_path):
    (tmp_path / "repo").mkdir()
    return tmp_path


def run(scratch: Path, code: str, sandbox: Sandbox = Sandbox("bwrap"), timeout: float = 20, **kw):
    return run_contained([sys.executable, "-c", code], scratch / "repo", timeout, testenv.test_env_vars(scratch / "repo"),
                         sandbox, writable=scratch, **kw)


@needs_bwrap
def test_network_is_cut(scratch, listener):
    r = run(scratch, f"import socket; socket.create_connection(('127.0.0.1', {listener.port}), timeout=2)")
    assert r.exit_code != 0 and "ConnectionRefusedError" in r.output
    assert listener.accepted == 0
    r = run(scratch, "import socket; socket.create_connection(('192.0.2.1', 80), timeout=2)")
    assert "Network is unreachable" in r.output


@needs_bwrap
def test_only_the_scratch_folder_is_writable_and_tmp_is_private(scratch):
    outside = Path(tempfile_dir())
    try:
        code = (f"import os\nopen('in_repo.txt', 'w').write('ok')\nopen('/tmp/private.txt', 'w').write('ok')\n"
                f"for p in ['/etc/ctxbench-x', {str(outside / 'x')!r}, '/root/ctxbench-x']:\n"
                f"    try:\n        open(p, 'w')\n        print('WROTE', p)\n    except OSError as e:\n        print('REFUSED', p, e)\n")
        r = run(scratch, code)
        assert "WROTE" not in r.output and r.output.count("REFUSED") == 3
        assert (scratch / "repo" / "in_repo.txt").read_text() == "ok"
        assert not (outside / "x").exists() and not Path("/tmp/private.txt").exists()
    finally:
        os.rmdir(outside)


@needs_bwrap
def test_home_and_hidden_folders_are_empty_but_the_interpreter_works(scratch):
    secret = Path(tempfile_dir())
    (secret / "gold.diff").write_text("the answer")
    code = (f"import os, sys\nprint('HOME', os.listdir({str(Path.home())!r}) == [] or sorted(os.listdir({str(Path.home())!r})))\n"
            f"print('HIDDEN', os.listdir({str(secret)!r}))\nprint('PY', sys.version_info[:2])")
    try:
        r = run(scratch, code, Sandbox("bwrap", hide=(str(secret),)))
    finally:
        (secret / "gold.diff").unlink()
        secret.rmdir()
    assert "HIDDEN []" in r.output and "PY (3," in r.output
    assert "the answer" not in r.output


@needs_bwrap
def test_a_hidden_folder_inside_an_interpreter_under_tmp_stays_hidden(scratch):
    """As a wheel's tasksets lie inside a venv made under /tmp: the jail binds the venv back over its
    private /tmp, and the hidden taskset inside it must still be covered (and the jail must start)."""
    prefix = Path(tempfile.mkdtemp(dir="/tmp")) / "venv"
    secret = prefix / "lib" / "site-packages" / "ctxbench" / "tasksets" / "smoke"
    secret.mkdir(parents=True)
    (secret / "gold.diff").write_text("the answer")
    (prefix / "bin").mkdir()
    (prefix / "bin" / "python3").symlink_to(sys.executable)
    code = f"import os\nprint('HIDDEN', os.listdir({str(secret)!r}))\nprint('PREFIX', sorted(os.listdir({str(prefix)!r})))"
    try:
        r = run_contained([str(prefix / "bin" / "python3"), "-c", code], scratch / "repo", 20,
                          testenv.test_env_vars(scratch / "repo"), Sandbox("bwrap", hide=(str(secret),)), writable=scratch)
    finally:
        shutil.rmtree(prefix.parent)
    assert r.exit_code == 0, r.output
    assert "HIDDEN []" in r.output and "PREFIX ['bin', 'lib']" in r.output
    assert "the answer" not in r.output


@needs_bwrap
def test_no_capabilities_no_raising_limits_and_other_processes_invisible(scratch):
    code = ("import os, resource\nprint('UID', os.getuid())\n"
            "print('CAPS', open('/proc/self/status').read().split('CapEff:')[1].split()[0])\n"
            "print('PIDS', sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))\n"
            "resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))")
    r = run(scratch, code)
    assert "UID 65534" in r.output and "CAPS 0000000000000000" in r.output
    pids = json.loads(r.output.split("PIDS ")[1].split("\n")[0])
    assert max(pids) < 10, "the host's processes are visible"
    assert "not allowed to raise maximum limit" in r.output


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_memory_and_file_size_are_limited(scratch, mode):
    if mode == "bwrap" and bwrap_available():
        pytest.skip("no bwrap")
    limits = ResourceLimits(address_space=1024**3, file_size=10 * 1024**2)
    r = run(scratch, "x = bytearray(2 * 1024**3)", Sandbox(mode, limits=limits))
    assert "MemoryError" in r.output
    r = run(scratch, "import signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
                     "open('big', 'wb').write(b'x' * (20 * 1024**2))", Sandbox(mode, limits=limits))
    assert "File too large" in r.output
    assert (scratch / "repo" / "big").stat().st_size <= 10 * 1024**2


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_process_count_is_limited(scratch, mode):
    if mode == "bwrap" and bwrap_available():
        pytest.skip("no bwrap")
    code = ("import os, time\nn = 0\ntry:\n    for _ in range(400):\n        if os.fork() == 0:\n"
            "            time.sleep(60)\n            os._exit(0)\n        n += 1\nexcept OSError as e:\n    print('REFUSED', e)\n"
            "print('FORKED', n)")
    r = run(scratch, code, Sandbox(mode, limits=ResourceLimits(processes=50)), timeout=120)
    assert not r.timed_out, "the forks were refused or stopped, not left to sleep until the timeout"
    if process_limit_mechanism() == "watchdog":
        assert r.limit_hit == "processes"
    else:
        assert "REFUSED" in r.output and int(r.output.split("FORKED ")[1].split()[0]) < 50
    assert descendants(os.getpid()) == []


def test_watchdog_kills_the_sandbox_where_no_cgroup_can_be_made(scratch, monkeypatch):
    """Simulates a host without a writable pids cgroup (e.g. a container)."""
    if os.geteuid() != 0:
        pytest.skip("the watchdog is the fallback for root only")
    monkeypatch.setattr(limits_module.PidsCgroup, "create", classmethod(lambda cls, limit: None))
    code = "import os, time\nfor _ in range(300):\n    if os.fork() == 0:\n        time.sleep(60)\n        os._exit(0)\ntime.sleep(60)"
    r = run(scratch, code, Sandbox("bwrap" if not bwrap_available() else "none",
                                   limits=ResourceLimits(processes=40)))
    assert r.limit_hit == "processes" and "more than 40 processes" in r.output and not r.timed_out
    assert descendants(os.getpid()) == []


@pytest.mark.parametrize("setup", ["exec chain", "fork"])
def test_the_command_starts_limited_in_its_cgroup_and_dies_with_the_harness(scratch, monkeypatch, setup):
    """Both ways of setting the command up (util-linux execs; a fork running `child_setup`) give it the
    same limits, cgroup, parent-death signal and fixed addresses before it runs."""
    if setup == "fork":
        monkeypatch.setattr(launch, "setup_tools", lambda: None)
    elif launch.setup_tools() is None:
        pytest.skip("setpriv, setarch or prlimit missing")
    code = ("import ctypes, resource\nsig = ctypes.c_int()\nctypes.CDLL(None).prctl(2, ctypes.byref(sig))\n"
            "print('PDEATHSIG', sig.value)\nprint('PERSONALITY', open('/proc/self/personality').read().strip())\n"
            "print('LIMITS', [resource.getrlimit(r) for r in (resource.RLIMIT_CPU, resource.RLIMIT_AS,"
            " resource.RLIMIT_FSIZE, resource.RLIMIT_CORE)])\n"
            "print('CGROUP', [l for l in open('/proc/self/cgroup').read().splitlines() if 'ctxbench-' in l])")
    limits = ResourceLimits(address_space=3 * 1024**3, file_size=10 * 1024**2)
    r = run(scratch, code, Sandbox("none", limits=limits), timeout=20)
    assert r.exit_code == 0, r.output
    assert "PDEATHSIG 9" in r.output
    assert int(r.output.split("PERSONALITY ")[1].split()[0], 16) & 0x0040000
    assert f"LIMITS [(25, 25), ({3 * 1024**3}, {3 * 1024**3}), ({10 * 1024**2}, {10 * 1024**2}), (0, 0)]" in r.output
    if process_limit_mechanism() == "cgroup":
        assert "CGROUP []" not in r.output, r.output


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_timeout_kills_children_even_those_in_a_new_session(scratch, mode):
    if mode == "bwrap" and bwrap_available():
        pytest.skip("no bwrap")
    marker = scratch / "alive"
    code = (f"import os, time\nif os.fork() == 0:\n    os.setsid()\n    while True:\n"
            f"        open({str(marker)!r}, 'w').write(str(time.time()))\n        time.sleep(0.1)\n"
            f"while not os.path.exists({str(marker)!r}):\n    time.sleep(0.01)\ntime.sleep(60)")
    # 5 s: time enough for the child to start on a loaded machine; the parent sleeps only once it has
    r = run(scratch, code, Sandbox(mode), timeout=5.0)
    assert r.timed_out and r.exit_code == -9
    time.sleep(0.3)
    stamp = marker.read_text()
    time.sleep(0.4)
    assert marker.read_text() == stamp, "a child in its own session survived"


@needs_bwrap
def test_gigabytes_of_output_cost_no_memory(scratch):
    r = run(scratch, "import os\nfor _ in range(300): os.write(1, b'y' * (1 << 20))", timeout=300, output_cap=10_000)
    assert not r.timed_out and len(r.output) < 12_000 and r.omitted_bytes == 300 * 1024**2 - 2 * 5_000


@needs_bwrap
def test_object_addresses_repeat_run_to_run(scratch):
    outputs = {run(scratch, "print(object())").output for _ in range(3)}
    assert len(outputs) == 1


def test_fallback_to_none_is_loud_in_output_and_manifest(experiment_file, tmp_path, monkeypatch):
    """Simulates a host where bubblewrap cannot run."""
    monkeypatch.setattr(jail, "bwrap_available", lambda: "bwrap is not installed (test)")
    exp = experiment_file(sandbox="bwrap", taskset={"path": str(ROOT / "tasksets" / "smoke"),
                                                    "ids": ["calc-median-even-length"]})
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(out), "--no-report"])
    assert result.exit_code == 0, result.output
    assert "WARNING: sandbox fell back to none: bwrap is not installed (test)" in result.output
    sandbox = json.loads((out / "manifest.json").read_text())["sandbox"]
    assert sandbox["requested"] == "bwrap" and sandbox["used"] == "none"
    assert "bwrap is not installed" in sandbox["warning"]


@needs_bwrap
def test_an_interpreter_under_tmp_still_runs_in_the_jail(tmp_path):
    """A virtual environment under /tmp is bound back in over the jail's private /tmp."""
    import subprocess
    import sys

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    assert str(venv).startswith("/tmp/")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    python = str(venv / "bin" / "python")
    r = run_contained([python, "-c", "import sys; print(sys.prefix)"], scratch, 30,
                      testenv.test_env_vars(scratch), Sandbox("bwrap"), writable=scratch)
    assert r.exit_code == 0, r.output
    assert str(venv) in r.output

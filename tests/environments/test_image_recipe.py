"""The test image's recipe: its pytest is the one ctxbench's own environment runs local tests with,
and its name changes with the recipe."""

from __future__ import annotations

import json
import shutil
import subprocess
from importlib.metadata import version

from conftest import BUILD, IMAGE

REQUIREMENTS = BUILD.with_name("image-requirements.txt")


def _pins() -> dict[str, str]:
    lines = [line.strip() for line in REQUIREMENTS.read_text().splitlines()]
    return dict(line.split("==") for line in lines if line and not line.startswith("#"))


def test_the_pins_are_the_local_test_environment_s_versions():
    pins = _pins()
    assert "pytest" in pins
    here = {name: version(name) for name in pins}
    assert here == pins, (f"{REQUIREMENTS} pins {pins}, the local backend's environment has {here}: "
                          "update the pins (the image gets a new name and is rebuilt)")


def test_the_image_has_the_pinned_versions(image):
    probe = ("import json; from importlib.metadata import version; import pytest; "
             f"print(json.dumps([pytest.__file__, {{n: version(n) for n in {sorted(_pins())!r}}}]))")
    out = subprocess.run(["docker", "run", "--rm", "--network", "none", image, "python", "-c", probe],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    where, versions = json.loads(out.stdout)
    assert where.startswith("/usr/local/") and versions == _pins()


def test_the_image_name_follows_the_recipe(tmp_path):
    assert IMAGE.startswith("ctxbench-test:bookworm-") and len(IMAGE.rsplit("-", 1)[1]) == 12
    copy = tmp_path / "environments"
    copy.mkdir()
    shutil.copy(BUILD, copy)
    shutil.copy(REQUIREMENTS, copy)

    def tag() -> str:
        return subprocess.run(["bash", str(copy / BUILD.name), "--tag"], check=True, capture_output=True,
                              text=True).stdout.strip()

    assert tag() == IMAGE
    with (copy / REQUIREMENTS.name).open("a") as fh:
        fh.write("tomli==2.0.1\n")
    changed = tag()
    assert changed != IMAGE and changed.startswith("ctxbench-test:bookworm-")
    wrong = subprocess.run(["bash", str(copy / BUILD.name), "ctxbench-test:bookworm"], capture_output=True, text=True)
    assert wrong.returncode == 2 and wrong.stderr.startswith("error: unknown argument")

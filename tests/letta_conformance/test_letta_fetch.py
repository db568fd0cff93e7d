"""The conformance tests fetch the pinned Letta Code package themselves, once per machine, and
fail (never skip) saying why when they cannot. A stand-in `npm` on PATH plays the registry, so
these run offline and count how often it was asked."""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
import tarfile
import threading
from pathlib import Path

import pytest

from tests.letta_conformance import letta
from tests.letta_conformance.letta import ENV, PACKAGE, VERSION, package_dir

# npm pack's stand-in (a Python script: the PATH it runs with holds node and npm only): logs
# its call, then copies the tarball named by $FAKE_TGZ into the --pack-destination folder, or
# fails as npm does where $FAKE_TGZ is empty.
FAKE_NPM = """#!{python}
import os, shutil, sys, time
with open(os.environ["FAKE_CALLS"], "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
time.sleep(0.2)
if not os.environ["FAKE_TGZ"]:
    sys.exit("npm error 404 Not Found - GET https://registry.npmjs.org/x")
dest = sys.argv[sys.argv.index("--pack-destination") + 1]
shutil.copy(os.environ["FAKE_TGZ"], os.path.join(dest, "letta-ai-letta-code-{version}.tgz"))
"""


def tarball(path: Path, files: dict[str, str]) -> Path:
    """An npm tarball: each file under package/."""
    with tarfile.open(path, "w:gz") as archive:
        for name, text in files.items():
            data = text.encode("utf-8")
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


PUBLISHED = {"package.json": json.dumps({"name": "@letta-ai/letta-code", "version": VERSION}),
             "letta.js": "// src/index.ts\n"}


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH of node only: each test adds the npm it means."""
    folder = tmp_path / "bin"
    folder.mkdir()
    node = shutil.which("node")
    assert node is not None, "node is not installed"
    (folder / "node").symlink_to(node)
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setenv("FAKE_CALLS", str(tmp_path / "calls"))
    return folder


@pytest.fixture
def target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache" / "memrepo" / f"letta-code-{VERSION}" / "package"
    monkeypatch.setenv(ENV, str(folder))
    return folder


def fake_npm(bin_dir: Path, monkeypatch: pytest.MonkeyPatch, tgz: Path | None) -> None:
    script = bin_dir / "npm"
    script.write_text(FAKE_NPM.format(python=sys.executable, version=VERSION))
    script.chmod(0o755)
    monkeypatch.setenv("FAKE_TGZ", "" if tgz is None else str(tgz))


def calls(tmp_path: Path) -> list[str]:
    log = tmp_path / "calls"
    return log.read_text().splitlines() if log.exists() else []


def test_a_missing_package_is_fetched_once(tmp_path: Path, bin_dir: Path, target: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    fake_npm(bin_dir, monkeypatch, tarball(tmp_path / "published.tgz", PUBLISHED))
    assert package_dir() == target
    assert package_dir() == target
    assert json.loads((target / "package.json").read_text())["version"] == VERSION
    assert [call.split()[0] for call in calls(tmp_path)] == ["pack"]
    assert PACKAGE in calls(tmp_path)[0]
    assert sorted(p.name for p in target.parent.iterdir()) == [".package.lock", "package"]  # no leftovers


def test_runs_started_together_fetch_once(tmp_path: Path, bin_dir: Path, target: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    fake_npm(bin_dir, monkeypatch, tarball(tmp_path / "published.tgz", PUBLISHED))
    found: list[Path] = []
    runs = [threading.Thread(target=lambda: found.append(package_dir())) for _ in range(3)]
    for run in runs:
        run.start()
    for run in runs:
        run.join()
    assert found == [target] * 3
    assert len(calls(tmp_path)) == 1


def test_an_empty_folder_named_by_the_environment_is_filled(tmp_path: Path, bin_dir: Path, target: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    target.mkdir(parents=True)
    fake_npm(bin_dir, monkeypatch, tarball(tmp_path / "published.tgz", PUBLISHED))
    assert letta.installed(package_dir())


def test_without_npm_the_test_fails_and_says_how_to_install_it(bin_dir: Path, target: Path) -> None:
    with pytest.raises(pytest.fail.Exception) as caught:
        package_dir()
    assert "npm is not installed" in str(caught.value)
    assert "apt-get install nodejs npm" in str(caught.value)
    assert not target.exists()


def test_without_node_the_test_fails(bin_dir: Path, target: Path) -> None:
    (bin_dir / "node").unlink()
    with pytest.raises(pytest.fail.Exception) as caught:
        package_dir()
    assert "node is not installed" in str(caught.value)


def test_a_failed_fetch_fails_with_npms_words_and_leaves_nothing(tmp_path: Path, bin_dir: Path, target: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    fake_npm(bin_dir, monkeypatch, None)
    with pytest.raises(pytest.fail.Exception) as caught:
        package_dir()
    assert f"could not fetch Letta Code {VERSION}" in str(caught.value)
    assert "404 Not Found" in str(caught.value)
    assert [p.name for p in target.parent.iterdir()] == [".package.lock"]


def test_a_tarball_without_the_bundle_fails(tmp_path: Path, bin_dir: Path, target: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    fake_npm(bin_dir, monkeypatch, tarball(tmp_path / "other.tgz", {"package.json": PUBLISHED["package.json"]}))
    with pytest.raises(pytest.fail.Exception) as caught:
        package_dir()
    assert "holds no package/letta.js" in str(caught.value)
    assert not target.exists()


def test_a_folder_holding_something_else_is_left_alone(tmp_path: Path, bin_dir: Path, target: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    target.mkdir(parents=True)
    (target / "notes.txt").write_text("mine")
    fake_npm(bin_dir, monkeypatch, tarball(tmp_path / "published.tgz", PUBLISHED))
    with pytest.raises(pytest.fail.Exception) as caught:
        package_dir()
    assert "holds something other than Letta Code" in str(caught.value)
    assert (target / "notes.txt").read_text() == "mine"
    assert calls(tmp_path) == []


def test_another_version_fails_naming_both(tmp_path: Path, bin_dir: Path, target: Path) -> None:
    target.mkdir(parents=True)
    (target / "package.json").write_text(json.dumps({"version": "0.1.0"}))
    (target / "letta.js").write_text("")
    with pytest.raises(pytest.fail.Exception) as caught:
        package_dir()
    assert f"holds Letta Code 0.1.0, not {VERSION}" in str(caught.value)
    assert sorted(os.listdir(target)) == ["letta.js", "package.json"]

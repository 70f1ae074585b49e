"""`pip install .` gets what `make` installs: pyproject.toml's ranges admit requirements.lock's
pins, every direct requirement is declared (runtime or an extra), and the dbt project the
wheel packs is the one at the repository root."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[3]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def pins(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            req = Requirement(line)
            (spec,) = req.specifier
            found[canonicalize_name(req.name)] = spec.version
    return found


def declared() -> list[Requirement]:
    reqs = [Requirement(r) for r in PYPROJECT["dependencies"]]
    for extra in PYPROJECT["optional-dependencies"].values():
        reqs += [Requirement(r) for r in extra]
    return reqs


def test_declared_ranges_admit_the_locked_versions():
    locked = pins(ROOT / "requirements.lock")
    for req in declared():
        name = canonicalize_name(req.name)
        assert name in locked, f"{req.name} is declared but not locked"
        assert req.specifier.contains(locked[name], prereleases=True), (
            f"{req} does not admit the locked {req.name}=={locked[name]}"
        )


def test_every_direct_requirement_is_declared():
    names = {canonicalize_name(r.name) for r in declared()}
    direct = set(pins(ROOT / "requirements.txt"))
    assert direct - names == set(), f"in requirements.txt but not in pyproject.toml: {sorted(direct - names)}"


def test_extras_cover_thrift_test_and_lint():
    extras = PYPROJECT["optional-dependencies"]
    assert set(extras) >= {"thrift", "test", "lint"}
    assert any(Requirement(r).extras == {"PyHive"} for r in extras["thrift"])
    assert {canonicalize_name(Requirement(r).name) for r in extras["test"]} >= {"pytest", "hypothesis", "selenium"}


def test_the_wheel_packs_the_dbt_project_the_checkout_runs():
    """setup.py copies these parts into qrepl/dbt_project/; each must exist, and the project
    file must name every path dbt reads from."""
    import re

    setup_py = (ROOT / "setup.py").read_text()
    parts = re.search(r"DBT_PROJECT_PARTS = \[(.*?)\]", setup_py).group(1)
    packed = {p.strip().strip('"') for p in parts.split(",")}
    for part in packed:
        assert (ROOT / part).exists(), part
    project = (ROOT / "dbt_project.yml").read_text()
    for key in ("model-paths", "macro-paths", "seed-paths", "test-paths"):
        folder = re.search(rf'{key}: \["(\w+)"\]', project).group(1)
        assert folder in packed, f"{key} {folder} is not packed into the wheel"
    assert {"profiles.yml", "publications"} <= packed  # the profile and the demo publication


def test_every_data_file_of_the_package_is_declared_package_data():
    """A file of python/qrepl that is not Python reaches the wheel only when pyproject.toml's
    package-data names it for its package (the viewer's templates, the metastore's lock tables)."""
    import fnmatch
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    package_root = ROOT / "python" / "qrepl"
    tracked = [
        p
        for p in package_root.rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    ]
    assert tracked
    for path in tracked:
        rel = path.relative_to(package_root.parent)
        owners = [
            (pkg, pattern)
            for pkg, patterns in declared.items()
            for pattern in patterns
            if fnmatch.fnmatch(str(rel), str(Path(*pkg.split(".")) / pattern))
        ]
        assert owners, f"{rel} is not package data: pyproject.toml [tool.setuptools.package-data]"

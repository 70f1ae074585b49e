"""Packs the dbt project into the wheel as `qrepl/dbt_project/`, so an installed qrepl runs
its queue reader without the checkout (`qrepl.storage.spark.PROJECT_DIR` finds it there). The
project stays at the repository root, where `dbt build` and sqlfluff expect it; everything
else about the package is declared in pyproject.toml."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# What `dbt build` and `qrepl demo` read: the project file, its paths and the demo publication.
DBT_PROJECT_PARTS = ["dbt_project.yml", "models", "macros", "profiles.yml", "seeds", "tests", "publications"]


class BuildPyWithDbtProject(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the checkout itself
        target = Path(self.build_lib) / "qrepl" / "dbt_project"
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        for part in DBT_PROJECT_PARTS:
            source = ROOT / part
            if source.is_dir():
                shutil.copytree(source, target / part, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(source, target / part)


setup(cmdclass={"build_py": BuildPyWithDbtProject})

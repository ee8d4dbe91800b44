"""Packages for setuptools: ratecheck, and the top-level folders problems/ and proofs/ installed as
ratecheck.problems and ratecheck.proofs (a package-dir mapping; everything else is in pyproject.toml)."""

from setuptools import find_packages, setup

NAMESPACED = {"problems": "ratecheck.problems", "proofs": "ratecheck.proofs"}

setup(
    packages=find_packages(include=["ratecheck", "ratecheck.*"])
    + [NAMESPACED[p.split(".")[0]] + p[len(p.split(".")[0]):]
       for p in find_packages(include=[f"{top}{tail}" for top in NAMESPACED for tail in ("", ".*")])],
    package_dir={"ratecheck": "ratecheck", **{new: old for old, new in NAMESPACED.items()}},
)

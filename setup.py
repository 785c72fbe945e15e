"""What `pip install .` in this repository installs: the pre-commit placeholder.

pre-commit runs `pip install .` for the `language: python` hooks of .pre-commit-hooks.yaml.
This package has no code of its own; it depends on the meshjob wheel of the version in
Cargo.toml, so the hook gets the prebuilt binary from PyPI. The wheel itself is built with
`maturin build` (see pyproject.toml). A checkout whose version has no published wheel yet
cannot install these hooks: use a release tag as `rev`, or the `-src` hooks, which build
with cargo.
"""

import pathlib
import re

from setuptools import setup

CARGO_TOML = pathlib.Path(__file__).resolve().parent / "Cargo.toml"
VERSION = re.search(
    r'^version = "([^"]+)"$', CARGO_TOML.read_text(encoding="utf-8"), re.MULTILINE
).group(1)

setup(
    name="meshjob-pre-commit-placeholder",
    version=VERSION,
    description="pre-commit's install of the meshjob hooks: depends on the meshjob wheel",
    install_requires=[f"meshjob=={VERSION}"],
    packages=[],
    py_modules=[],
)

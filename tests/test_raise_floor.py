"""Raising a project's torch requirement in its file's own syntax (torchup/settings/raise_floor.py).

Each case is read with torch_requirement's own readers, raised, read again (the new release must be
the lowest admitted), and raised again (nothing changes the second time). Expected texts are whole
files, so every byte outside the requirement is checked too (CRLF, comments, BOM, quoting).
"""

from __future__ import annotations

import pytest

from torchup.settings.raise_floor import RaiseResult, apply_edits, raise_requirement, raise_specifier
from torchup.settings.torch_requirement import (
    TorchRequirement,
    _environment,
    _pyproject,
    _requirements,
    _setup_cfg,
    _setup_py,
)


def _read(name: str, text: str) -> list[TorchRequirement]:
    if name.endswith(".txt"):
        return _requirements(name, text, set(), set())
    readers = {"pyproject.toml": _pyproject, "setup.py": _setup_py, "setup.cfg": _setup_cfg,
               "environment.yml": _environment}
    return readers[name](name, text)


def _only(name: str, text: str, line: int | None = None) -> TorchRequirement:
    found = [requirement for requirement in _read(name, text) if line is None or requirement.line == line]
    assert len(found) == 1, found
    return found[0]


def _raise(name: str, text: str, line: int | None = None, release: str = "2.3") -> RaiseResult:
    return raise_requirement(text, _only(name, text, line), release)


RAISED = [
    # requirements.txt: continuation lines, hashes, inline comments, markers, extras, CRLF
    ("requirements.txt", "numpy\r\ntorch>=1.7  # the floor\r\nscipy\r\n",
     "numpy\r\ntorch>=2.3  # the floor\r\nscipy\r\n"),
    ("requirements.txt", "torch>=1.7,<3 \\\r\n    --hash=sha256:abc \\\r\n    --hash=sha256:def  # pinned\r\n",
     "torch>=2.3,<3 \\\r\n    --hash=sha256:abc \\\r\n    --hash=sha256:def  # pinned\r\n"),
    ("requirements.txt", "torch \\\n    >=1.7,<3\n", "torch \\\n    >=2.3,<3\n"),
    ("requirements.txt", "torch>=1.7,!=1.12.0\n", "torch>=2.3,!=1.12.0\n"),
    ("requirements.txt", "torch >= 1.7 , < 3\n", "torch >= 2.3 , < 3\n"),
    ("requirements.txt", "torch>1.7\n", "torch>=2.3\n"),
    ("requirements.txt", "torch (>=1.7)\n", "torch (>=2.3)\n"),
    ("requirements.txt", "torch~=2.1\n", "torch~=2.3\n"),
    ("requirements.txt", "Torch[opt]>=1.7; python_version>=\"3.8\"  # gpu\n",
     "Torch[opt]>=2.3; python_version>=\"3.8\"  # gpu\n"),
    ("requirements.txt", "torch\n", "torch>=2.3\n"),
    ("requirements.txt", "torch<3\n", "torch>=2.3,<3\n"),
    ("requirements.txt", "torch[opt] ; python_version>='3.8'\n", "torch[opt]>=2.3 ; python_version>='3.8'\n"),
    ("requirements.txt", "torch --hash=sha256:abc\n", "torch>=2.3 --hash=sha256:abc\n"),
    # pyproject.toml: PEP 621, optional dependencies, dependency groups, PDM and uv dev groups
    ("pyproject.toml",
     "[project]\r\nname = 'x'\r\ndependencies = [\r\n  'numpy',  # maths\r\n"
     "  'torch>=1.13,<3; python_version>=\"3.8\"',  # the floor\r\n]\r\n",
     "[project]\r\nname = 'x'\r\ndependencies = [\r\n  'numpy',  # maths\r\n"
     "  'torch>=2.3,<3; python_version>=\"3.8\"',  # the floor\r\n]\r\n"),
    ("pyproject.toml", '[project]\ndependencies = ["numpy", "torch[opt]"]  # one line\n',
     '[project]\ndependencies = ["numpy", "torch[opt]>=2.3"]  # one line\n'),
    ("pyproject.toml", '[project.optional-dependencies]\ntorch = ["torch>=1.13"]\n',
     '[project.optional-dependencies]\ntorch = ["torch>=2.3"]\n'),
    ("pyproject.toml", '[dependency-groups]\ndev = [\n    "torch<3",\n]\n',
     '[dependency-groups]\ndev = [\n    "torch>=2.3,<3",\n]\n'),
    ("pyproject.toml", "[tool.pdm.dev-dependencies]\ntest = ['torch>=1.13']\n",
     "[tool.pdm.dev-dependencies]\ntest = ['torch>=2.3']\n"),
    ("pyproject.toml", '[tool.uv]\ndev-dependencies = ["torch>=1.13"]\n', '[tool.uv]\ndev-dependencies = ["torch>=2.3"]\n'),
    # Poetry: a string, an inline table, a list of tables, a group; caret kept where its cap stays
    ("pyproject.toml", '[tool.poetry.dependencies]\r\npython = "^3.10"\r\ntorch = "^2.1"  # gpu\r\n',
     '[tool.poetry.dependencies]\r\npython = "^3.10"\r\ntorch = "^2.3"  # gpu\r\n'),
    ("pyproject.toml", "[tool.poetry.dependencies]\ntorch = '>=1.13 <3'\n", "[tool.poetry.dependencies]\ntorch = '>=2.3 <3'\n"),
    ("pyproject.toml", '[tool.poetry.dependencies]\ntorch = "*"\n', '[tool.poetry.dependencies]\ntorch = ">=2.3"\n'),
    ("pyproject.toml", '[tool.poetry.dependencies]\ntorch = "~2"\n', '[tool.poetry.dependencies]\ntorch = ">=2.3,~2"\n'),
    ("pyproject.toml", '[tool.poetry.dependencies]\ntorch = { version = ">=1.13", source = "pytorch" }  # cu121\n',
     '[tool.poetry.dependencies]\ntorch = { version = ">=2.3", source = "pytorch" }  # cu121\n'),
    ("pyproject.toml",
     "[tool.poetry.dependencies]\ntorch = [{ version = \">=1.13\", markers = \"sys_platform == 'linux'\" }, "
     "{ version = \"^2.0\", markers = \"sys_platform == 'darwin'\" }]\n",
     "[tool.poetry.dependencies]\ntorch = [{ version = \">=2.3\", markers = \"sys_platform == 'linux'\" }, "
     "{ version = \"^2.3\", markers = \"sys_platform == 'darwin'\" }]\n"),
    ("pyproject.toml", '[tool.poetry.group.dev.dependencies]\n"torch" = "^2.0"\n',
     '[tool.poetry.group.dev.dependencies]\n"torch" = "^2.3"\n'),
    # setup.cfg: the key's line and continuation lines
    ("setup.cfg", "[options]\r\ninstall_requires =\r\n    numpy\r\n    torch>=1.7  # floor\r\n",
     "[options]\r\ninstall_requires =\r\n    numpy\r\n    torch>=2.3  # floor\r\n"),
    ("setup.cfg", "[options]\ninstall_requires = torch<3\n", "[options]\ninstall_requires = torch>=2.3,<3\n"),
    ("setup.cfg", "[options.extras_require]\ntorch = torch\n", "[options.extras_require]\ntorch = torch>=2.3\n"),
    # setup.py: a literal or a module-level variable; the quote style is kept
    ("setup.py", "from setuptools import setup\r\nREQS = ['numpy', 'torch>=1.7,<3']  # floor\r\n"
                 "setup(name='x', install_requires=REQS)\r\n",
     "from setuptools import setup\r\nREQS = ['numpy', 'torch>=2.3,<3']  # floor\r\n"
     "setup(name='x', install_requires=REQS)\r\n"),
    ("setup.py", 'import setuptools\nsetuptools.setup(\n    install_requires=["é", "torch"],\n)\n',
     'import setuptools\nsetuptools.setup(\n    install_requires=["é", "torch>=2.3"],\n)\n'),
    ("setup.py", "setup(extras_require={'gpu': [r'torch>1.7; python_version > \"3\"']})\n",
     "setup(extras_require={'gpu': [r'torch>=2.3; python_version > \"3\"']})\n"),
    ("setup.py", 'setup(install_requires=["""torch>=1.7"""])\n', 'setup(install_requires=["""torch>=2.3"""])\n'),
    # environment.yml: conda specs and the pip list
    ("environment.yml", "name: x\r\ndependencies:\r\n  - python=3.10\r\n  - pytorch>=1.13  # cuda\r\n",
     "name: x\r\ndependencies:\r\n  - python=3.10\r\n  - pytorch>=2.3  # cuda\r\n"),
    ("environment.yml", "dependencies:\n  - pytorch\n", "dependencies:\n  - pytorch>=2.3\n"),
    ("environment.yml", "dependencies:\n  - conda-forge::pytorch-cpu >=1.13,<3 cpu*\n",
     "dependencies:\n  - conda-forge::pytorch-cpu >=2.3,<3 cpu*\n"),
    ("environment.yml", "dependencies:\n  - pytorch[version='>=1.13']\n", "dependencies:\n  - pytorch[version='>=2.3']\n"),
    ("environment.yml", "dependencies:\n  - pip\n  - pip:\n    - \"torch>=1.13\"  # wheel\n",
     "dependencies:\n  - pip\n  - pip:\n    - \"torch>=2.3\"  # wheel\n"),
]


@pytest.mark.parametrize(("name", "before", "after"), RAISED)
def test_raised_in_the_files_own_syntax(name: str, before: str, after: str) -> None:
    requirement = _only(name, before)
    result = raise_requirement(before, requirement, "2.3")
    assert (result.text, result.reason, result.changed) == (after, "", True)
    again = _only(name, after, requirement.line)
    assert again.release == "2.3"  # read back: the lowest release it admits
    assert result.description.endswith(f" -> `{again.text}`")
    second = raise_requirement(after, again, "2.3")  # idempotent
    assert (second.text, second.changed) == (after, False)
    assert "already admits nothing below 2.3" in second.description


def test_description_names_the_file_line_and_both_texts() -> None:
    text = "numpy\n" * 15 + "torch>=1.7\n"
    result = _raise("requirements.txt", text)
    assert result.description == "requirements.txt:16: `torch>=1.7` -> `torch>=2.3`"


def test_both_requirements_of_an_environment_raise_one_at_a_time() -> None:
    text = "dependencies:\n  - pytorch>=1.13\n  - pip:\n    - torch>=1.13\n"
    first = _raise("environment.yml", text, line=2)
    assert first.text == "dependencies:\n  - pytorch>=2.3\n  - pip:\n    - torch>=1.13\n"
    second = _raise("environment.yml", first.text or "", line=4)
    assert second.text == "dependencies:\n  - pytorch>=2.3\n  - pip:\n    - torch>=2.3\n"


def test_a_bom_stays_in_front() -> None:
    # (the reader keeps a BOM in the first line's text; a caller that decodes with utf-8-sig does not)
    text = "\ufefftorch>=1.7\r\n"
    result = raise_requirement(text, TorchRequirement("requirements.txt", 1, "torch>=1.7", None), "2.3")
    assert result.text == "\ufefftorch>=2.3\r\n"
    setup = "\ufeff# é\nsetup(install_requires=['torch>=1.7'])\n"
    result = raise_requirement(setup, TorchRequirement("setup.py", 2, "torch>=1.7", None), "2.3")
    assert result.text == "\ufeff# é\nsetup(install_requires=['torch>=2.3'])\n"
    later = "\ufeffnumpy\ntorch\n"
    assert _raise("requirements.txt", later).text == "\ufeffnumpy\ntorch>=2.3\n"


@pytest.mark.parametrize(("text", "release"), [
    ("torch>=2.4\n", "2.3"), ("torch>=2.3.1\n", "2.3"), ("torch>2.3\n", "2.3"), ("torch==2.4.1\n", "2.3"),
    ("torch~=2.3.0\n", "2.3"), ("torch==2.5.*\n", "2.3"), ("torch>=1.7\n", "1.7"),
])
def test_a_floor_already_reached_stays(text: str, release: str) -> None:
    result = _raise("requirements.txt", text, release=release)
    assert (result.text, result.changed, result.reason) == (text, False, "")
    assert f"already admits nothing below {release}" in result.description


FAILURES = [
    ("requirements.txt", "torch==1.12.1\n", "`==1.12.1` pins one version"),
    ("requirements.txt", "torch===1.12.1\n", "`===1.12.1` pins one version"),
    ("requirements.txt", "torch==1.13.*\n", "`==1.13.*` pins the 1.13 series"),
    ("requirements.txt", "torch~=1.13.0\n", "`~=1.13.0` admits nothing from 1.14 on"),
    ("requirements.txt", "torch~=1.13\n", "`~=1.13` admits nothing from 2.0 on"),
    ("requirements.txt", "torch>=1.7,<2\n", "`<2` excludes 2.3"),
    ("requirements.txt", "torch>=1.7,<=2.2.9\n", "`<=2.2.9` excludes 2.3"),
    ("requirements.txt", "torch @ https://example.org/torch.whl\n", "names a URL"),
    ("requirements.txt", "torch>=1.\\\n7\n", "cannot read the version specifier `>=1. 7`"),
    ("pyproject.toml", '[tool.poetry.dependencies]\ntorch = "^1.13"\n', "`^1.13` admits nothing from 2.0 on"),
    ("pyproject.toml", '[tool.poetry.dependencies]\ntorch = "~2.1"\n', "`~2.1` admits nothing from 2.2 on"),
    ("pyproject.toml", '[tool.poetry.dependencies]\ntorch = "1.13.1"\n', "`1.13.1` pins one version"),
    ("pyproject.toml", '[tool.poetry.dependencies]\ntorch = "^1.13 || ^2.0"\n', "has alternatives"),
    ("pyproject.toml", '[tool.poetry.dependencies]\ntorch = { git = "https://example.org/torch.git" }\n',
     "has no version"),
    ("pyproject.toml", '[tool.poetry.dependencies]\ntorch = [\n  { version = ">=1.13" },\n]\n',
     "continues on the next lines"),
    ("pyproject.toml", '[project]\ndependencies = ["torch\\u003e=1.13"]\n', "written with escapes"),
    ("setup.py", "setup(install_requires=['torch' '>=1.7'])\n", "not written as one plain string literal"),
    ("setup.py", "setup(install_requires=['torch\\x3e=1.7'])\n", "not written as one plain string literal"),
    ("environment.yml", "dependencies:\n  - pytorch=1.13\n", "`=1.13` pins the 1.13 series"),
    ("environment.yml", "dependencies:\n  - pytorch 1.13.1 cuda*\n", "`1.13.1` pins the 1.13.1 series"),
    ("environment.yml", "dependencies:\n  - conda-forge::pytorch==1.13.1=cuda*\n", "`==1.13.1` pins one version"),
    ("environment.yml", "dependencies:\n  - pytorch>=1.13,<2.0a0\n", "`<2.0a0` excludes 2.3"),
    ("environment.yml", "dependencies:\n  - pytorch>=1.13|>=2.0\n", "has alternatives"),
]


@pytest.mark.parametrize(("name", "text", "reason"), FAILURES)
def test_what_cannot_be_raised_exactly_says_why(name: str, text: str, reason: str) -> None:
    requirement = _only(name, text)
    result = raise_requirement(text, requirement, "2.3")
    assert result.text is None and not result.changed
    assert reason in result.reason, result.reason
    assert result.description.startswith(f"{name}:{requirement.line}: `{requirement.text}` not raised to 2.3: ")


def test_a_requirement_read_from_another_text_is_not_edited() -> None:
    requirement = _only("requirements.txt", "torch>=1.7\n")
    result = raise_requirement("numpy\n", requirement, "2.3")
    assert result.text is None and "has the file changed?" in result.reason
    result = raise_requirement("", requirement, "2.3")
    assert result.text is None


def test_a_pep621_extra_named_torch_is_not_taken_for_poetry() -> None:
    text = '[project.optional-dependencies]\ntorch = ["torch"]\n'
    assert _raise("pyproject.toml", text).text == '[project.optional-dependencies]\ntorch = ["torch>=2.3"]\n'


def test_a_bad_release_is_refused() -> None:
    with pytest.raises(ValueError):
        raise_requirement("torch\n", TorchRequirement("requirements.txt", 1, "torch", None), "two")


@pytest.mark.parametrize(("specifier", "dialect", "expected"), [
    (">=1.7", "pep440", ">=2.3"),
    (">=1.7,<3", "pep440", ">=2.3,<3"),
    (" <3", "pep440", " >=2.3,<3"),
    ("", "pep440", ">=2.3"),
    (">1.7,!=2.0.0", "pep440", ">=2.3,!=2.0.0"),
    ("~=2.1", "pep440", "~=2.3"),
    ("~=2.0.0", "pep440", None),
    ("==2.*", "pep440", ">=2.3,==2.*"),  # (its cap is kept: `>=2.3` goes in front)
    (">=1.7,<2.3.1", "pep440", ">=2.3,<2.3.1"),
    (">=1.7 <3", "pep440", None),  # (PEP 440 separates clauses with commas)
    ("1.7", "pep440", None),
    ("^2", "poetry", "^2.3"),
    ("^2.1.4", "poetry", "^2.3.0"),
    (">= 1.13, < 3", "poetry", ">= 2.3, < 3"),
    ("2.*", "poetry", ">=2.3,2.*"),
    ("*", "conda", ">=2.3"),
    ("<3", "conda", ">=2.3,<3"),
    (">=2.4 || >=3.0", "poetry", ">=2.4 || >=3.0"),
])
def test_raise_specifier(specifier: str, dialect: str, expected: str | None) -> None:
    result = raise_specifier(specifier, "2.3", dialect)
    assert result.text == expected, result
    if expected is not None:
        assert apply_edits(specifier, result.edits) == expected
    else:
        assert result.reason


def test_raise_to_a_patch_release() -> None:
    assert raise_specifier(">=1.7", "2.3.1").text == ">=2.3.1"
    assert raise_specifier("~=2.3.0", "2.3.1").text == "~=2.3.1"
    assert raise_specifier("~=2.1", "2.3.1").text == ">=2.3.1,~=2.1"  # (`~=2.3.1` would cap it at 2.4)

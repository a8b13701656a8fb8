"""Repository promises: the README opens with the two commands and CI runs exactly the README's test command."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _readme_commands():
    text = open(os.path.join(ROOT, "README.md")).read()
    block = re.search(r"```bash\n(.*?)```", text, re.S).group(1).strip().splitlines()
    return block


def test_readme_opens_with_two_commands():
    text = open(os.path.join(ROOT, "README.md")).read()
    first_block_pos = text.index("```bash")
    assert text[:first_block_pos].count("\n") <= 2, "the commands must come first"
    cmds = _readme_commands()
    assert len(cmds) == 2
    assert "pip install" in cmds[0] and "examples/" in cmds[0]
    assert "pytest" in cmds[1]


def test_ci_runs_the_readme_test_command():
    ci = open(os.path.join(ROOT, ".ci", "run")).read().strip().splitlines()
    assert ci[-1].strip() == _readme_commands()[1].strip()


def test_main_example_exists():
    cmd = _readme_commands()[0]
    script = re.search(r"python (examples/\S+\.py)", cmd).group(1)
    assert os.path.exists(os.path.join(ROOT, script))


def test_import_is_complete_and_silent():
    """A circular import inside the package shows up only as an ImportWarning (a family of functions silently
    missing from torchish.nn.functional): import the package fresh with ImportWarning as an error."""
    import subprocess
    import sys
    code = ("import torchish, torchish.nn.functional as F; "
            "assert all(hasattr(F, n) for n in ('l1_loss', 'cross_entropy', 'cosine_embedding_loss'))")
    done = subprocess.run([sys.executable, "-W", "error::ImportWarning", "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]

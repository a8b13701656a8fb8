import os
import sys

sys.path.insert(0, os.path.dirname(__file__))  # `from oracle import ...`


def pytest_addoption(parser):
    parser.addoption("--torchish-mode", default="default", choices=["default", "eager", "lazy", "lowered"],
                     help="run the suite with node-by-node backward (eager), lazy capture, or always-lowered "
                          "backward; results must be identical on every path")


def pytest_configure(config):
    import torchish
    mode = config.getoption("--torchish-mode")
    if mode == "eager":
        torchish.config.lowered_backward = "never"
    elif mode == "lazy":
        torchish.config.lazy = True
    elif mode == "lowered":
        torchish.config.lowered_backward = "always"

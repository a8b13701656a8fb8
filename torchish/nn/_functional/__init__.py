"""The implementations behind torchish.nn.functional, one file per family."""

"""``torch.export.graph_signature``: what each placeholder and each output of an exported graph is (a user
input, a parameter, a buffer, a lifted constant; a user output), printed as PyTorch prints it."""
from __future__ import annotations

import dataclasses
import enum


class InputKind(enum.Enum):
    USER_INPUT = enum.auto()
    PARAMETER = enum.auto()
    BUFFER = enum.auto()
    CONSTANT_TENSOR = enum.auto()
    CUSTOM_OBJ = enum.auto()
    TOKEN = enum.auto()


class OutputKind(enum.Enum):
    USER_OUTPUT = enum.auto()
    LOSS_OUTPUT = enum.auto()
    BUFFER_MUTATION = enum.auto()
    GRADIENT_TO_PARAMETER = enum.auto()
    GRADIENT_TO_USER_INPUT = enum.auto()
    USER_INPUT_MUTATION = enum.auto()
    TOKEN = enum.auto()
    PARAMETER_MUTATION = enum.auto()


@dataclasses.dataclass
class TensorArgument:
    name: str


@dataclasses.dataclass
class ConstantArgument:
    name: str
    value: object


@dataclasses.dataclass
class InputSpec:
    kind: InputKind
    arg: object
    target: str | None
    persistent: bool | None = None

    def __str__(self) -> str:
        target = "" if self.target is None else f" target='{self.target}'"
        persistent = "" if self.persistent is None else f" persistent={self.persistent}"
        return f"{self.arg.name}: {self.kind.name}{target}{persistent}"


@dataclasses.dataclass
class OutputSpec:
    kind: OutputKind
    arg: object
    target: str | None

    def __str__(self) -> str:
        target = "" if self.target is None else f" target='{self.target}'"
        return f"{self.arg.name}: {self.kind.name}{target}"


@dataclasses.dataclass
class ExportGraphSignature:
    """The placeholders' and outputs' roles, in graph order (``ep.graph_signature``)."""
    input_specs: list
    output_specs: list

    def _names(self, kind) -> tuple:
        return tuple(s.arg.name for s in self.input_specs if s.kind is kind)

    def _targets(self, kind) -> tuple:
        return tuple(s.target for s in self.input_specs if s.kind is kind)

    @property
    def parameters(self) -> tuple:
        return self._targets(InputKind.PARAMETER)

    @property
    def buffers(self) -> tuple:
        return self._targets(InputKind.BUFFER)

    @property
    def non_persistent_buffers(self) -> tuple:
        return tuple(s.target for s in self.input_specs if s.kind is InputKind.BUFFER and s.persistent is False)

    @property
    def lifted_tensor_constants(self) -> tuple:
        return self._targets(InputKind.CONSTANT_TENSOR)

    @property
    def user_inputs(self) -> tuple:
        return tuple(s.arg.name if isinstance(s.arg, TensorArgument) else s.arg.value
                     for s in self.input_specs if s.kind is InputKind.USER_INPUT)

    @property
    def user_outputs(self) -> tuple:
        return tuple(s.arg.name if isinstance(s.arg, TensorArgument) else s.arg.value
                     for s in self.output_specs if s.kind is OutputKind.USER_OUTPUT)

    @property
    def inputs_to_parameters(self) -> dict:
        return {s.arg.name: s.target for s in self.input_specs if s.kind is InputKind.PARAMETER}

    @property
    def inputs_to_buffers(self) -> dict:
        return {s.arg.name: s.target for s in self.input_specs if s.kind is InputKind.BUFFER}

    @property
    def inputs_to_lifted_tensor_constants(self) -> dict:
        return {s.arg.name: s.target for s in self.input_specs if s.kind is InputKind.CONSTANT_TENSOR}

    @property
    def buffers_to_mutate(self) -> dict:
        return {s.arg.name: s.target for s in self.output_specs if s.kind is OutputKind.BUFFER_MUTATION}

    @property
    def user_inputs_to_mutate(self) -> dict:
        return {s.arg.name: s.target for s in self.output_specs if s.kind is OutputKind.USER_INPUT_MUTATION}

    def __str__(self) -> str:
        inputs = "\n".join(str(s) for s in self.input_specs)
        outputs = "\n".join(str(s) for s in self.output_specs)
        return f"\n# inputs\n{inputs}\n\n# outputs\n{outputs}\n"

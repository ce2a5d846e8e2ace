"""Plan steps, one module per step kind: each class owns its certificate JSON, counts, cost parts,
element-level semantics (its docstring), emulator run and MLIR emission (``base`` tells how).

Adding an instruction is one class in one module here (registered with ``base.register``), plus
a primitive of the emulator's machine or of lowering's PlanEmitter if it needs a new one.
"""

from .barrier import BARRIER_SCOPES, Barrier
from .base import (PlanVerificationError, Step, dword_pairs, dwords_per_slot, known_ops, register, slot_dwords,
                   slots_per_dword, step_classes, step_from_json)
from .fused_dpp import FusedDpp
from .lane import Lane
from .lds import LdsLoad, LdsStore, transpose_element_addresses
from .matrix import MatrixLoad, MatrixStore, matrix_name, matrix_pieces
from .mov import Mov, prmt_as_perm, prmt_selector
from .movmatrix import Movmatrix
from .movrels import Movrels
from .perm_select import PermSelect
from .permlane_swap import PermlaneSwap
from .select import Select

__all__ = [
    "BARRIER_SCOPES", "Barrier", "FusedDpp", "Lane", "LdsLoad", "LdsStore", "MatrixLoad", "MatrixStore", "Mov",
    "Movmatrix", "Movrels", "PermSelect", "PermlaneSwap",
    "PlanVerificationError", "Select", "Step", "dword_pairs", "dwords_per_slot", "known_ops", "matrix_name", "matrix_pieces", "prmt_as_perm",
    "prmt_selector", "register",
    "slot_dwords", "slots_per_dword", "step_classes", "step_from_json", "transpose_element_addresses",
]

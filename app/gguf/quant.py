"""ggml tensor types and llama.cpp file types: names and byte sizes.

The table is inlined (a unit test checks it against the gguf package's own) because importing
the gguf package costs ~150 ms, which the planner's latency budget would rather keep.
"""

from __future__ import annotations

from app.gguf.errors import GGUFError, RefusedError
from app.i18n import T_

# ggml_type id -> (name, elements per block, bytes per block)
GGML_TYPES: dict[int, tuple[str, int, int]] = {
    0: ("F32", 1, 4),
    1: ("F16", 1, 2),
    2: ("Q4_0", 32, 18),
    3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22),
    7: ("Q5_1", 32, 24),
    8: ("Q8_0", 32, 34),
    9: ("Q8_1", 32, 40),
    10: ("Q2_K", 256, 84),
    11: ("Q3_K", 256, 110),
    12: ("Q4_K", 256, 144),
    13: ("Q5_K", 256, 176),
    14: ("Q6_K", 256, 210),
    15: ("Q8_K", 256, 292),
    16: ("IQ2_XXS", 256, 66),
    17: ("IQ2_XS", 256, 74),
    18: ("IQ3_XXS", 256, 98),
    19: ("IQ1_S", 256, 50),
    20: ("IQ4_NL", 32, 18),
    21: ("IQ3_S", 256, 110),
    22: ("IQ2_S", 256, 82),
    23: ("IQ4_XS", 256, 136),
    24: ("I8", 1, 1),
    25: ("I16", 1, 2),
    26: ("I32", 1, 4),
    27: ("I64", 1, 8),
    28: ("F64", 1, 8),
    29: ("IQ1_M", 256, 56),
    30: ("BF16", 1, 2),
    34: ("TQ1_0", 256, 54),
    35: ("TQ2_0", 256, 66),
    39: ("MXFP4", 32, 17),
    40: ("NVFP4", 64, 36),
    41: ("Q1_0", 128, 18),
}

TYPE_IDS: dict[str, int] = {name.lower(): tid for tid, (name, _, _) in GGML_TYPES.items()}

# llama_ftype (general.file_type) -> the name people know from file names.
FILE_TYPES: dict[int, str] = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
    11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
    17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS",
    23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S",
    29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0", 37: "TQ2_0",
    38: "MXFP4_MOE", 39: "NVFP4", 40: "Q1_0",
}


# Types ggml once had and llama.cpp no longer loads: their ids are kept, their block size is 0
# (ggml/include/ggml.h; gguf.cpp:740 refuses a tensor of such a type).
REMOVED_TYPES: dict[int, str] = {
    4: "Q4_2", 5: "Q4_3", 31: "Q4_0_4_4", 32: "Q4_0_4_8", 33: "Q4_0_8_8", 36: "IQ4_NL_4_4",
    37: "IQ4_NL_4_8", 38: "IQ4_NL_8_8",
}


def type_name(ggml_type: int) -> str:
    entry = GGML_TYPES.get(ggml_type)
    return entry[0] if entry else f"type{ggml_type}"


def row_bytes(ggml_type: int, n: int) -> int:
    """Bytes of one row of ``n`` elements (``n`` a multiple of the block size)."""
    _, block, size = GGML_TYPES[ggml_type]
    return n // block * size


def tensor_nbytes(ggml_type: int, shape: tuple[int, ...], name: str = "?",
                  source: str = "the file") -> int:
    """Bytes of a tensor's data, as ggml_nbytes computes them for a contiguous tensor."""
    entry = GGML_TYPES.get(ggml_type)
    if entry is None and ggml_type in REMOVED_TYPES:
        raise RefusedError(source, "type", T_("tensor {name!r} has the type {type}, "
                                              "which llama.cpp no longer loads", name=name,
                                              type=REMOVED_TYPES[ggml_type]), conversion=True)
    if entry is None:
        raise GGUFError(
            T_("{source} uses tensor type {ggml_type} (in {name!r}), which this version of "
               "Hearth does not know. Update Hearth, or choose another quantization of the model.",
               source=source, ggml_type=ggml_type, name=name)
        )
    _, block, size = entry
    if shape[0] % block:  # gguf.cpp:740
        raise RefusedError(source, "block_size", T_("tensor {name!r} has rows of {row} "
                                                    "elements, not a multiple of {block} as "
                                                    "{type} needs", name=name, row=shape[0],
                                                    block=block, type=entry[0]))
    rows = 1
    for d in shape[1:]:
        rows *= d
    return shape[0] // block * size * rows

# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Every example of examples/ as a Python-defined network (shared by tests),
and the networks of reference.NETWORKS that tests build in Python."""
import lstmc as lc
from lstmc import cells

I, H, P = 64, 128, 64

# example name -> (cell, network options, cell options)
EXAMPLES = {
    "lstm": (cells.lstm, {}, {}),
    "varlen": (cells.lstm, {"lengths": True}, {}),
    "lstmp": (cells.lstm, {}, {"proj_size": P}),
    "stack3": (cells.lstm, {"num_layers": 3}, {}),
    "bidirectional": (cells.lstm, {"direction": "bidirectional"}, {}),
    "gru": (cells.gru, {}, {}),
    "cho_gru": (cells.cho_gru, {}, {}),
    "mgu": (cells.mgu, {}, {}),
    "rnn_tanh": (cells.rnn, {}, {"nonlinearity": "tanh"}),
    "rnn_relu": (cells.rnn, {}, {"nonlinearity": "relu"}),
    "peephole": (cells.greff, {}, {"variant": "vanilla"}),
    "traditional": (cells.greff, {}, {"variant": "traditional"}),
}
for _v in ("nig", "nfg", "nog", "niaf", "noaf", "np", "cifg", "fgr"):
    EXAMPLES["greff_" + _v] = (cells.greff, {}, {"variant": _v})


# Networks of reference.NETWORKS that are no example.
NETWORKS = {
    "varlen_stack2": (cells.lstm, {"lengths": True, "num_layers": 2}, {}),
    "ln_lstm_stack2": (cells.ln_lstm, {"num_layers": 2}, {}),
    "lstmp_stack2": (cells.lstm, {"num_layers": 2}, {"proj_size": P}),
    "varlen_lstmp_bidirectional2": (cells.lstm, {"lengths": True, "num_layers": 2,
                                                 "direction": "bidirectional"},
                                    {"proj_size": P}),
}


def network(name, **extra):
    cell, net_opts, cell_opts = EXAMPLES[name] if name in EXAMPLES else NETWORKS[name]
    return lc.Network(cell, input_size=I, hidden=H, **dict(net_opts, **extra), **cell_opts)

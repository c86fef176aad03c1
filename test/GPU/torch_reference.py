"""Eager PyTorch implementation of every example in examples/.

Written from shared/docs/VARIANTS.md, independently of the .mlir files and of
the numpy reference (test/Integration/reference.py), whose argument layout it
shares: `forward(cell, tensors)` takes the arguments of example `cell` in the
order of reference.EXAMPLES[cell] (inputs, initial states, weights; `lengths`
as an integer tensor) and returns its results in order. It works for any
float dtype and device and is differentiable by torch.autograd, so that
torch.autograd.grad of it in float64 is the reference for the gradient
functions (@forward_grad) of the compiled examples on the GPU
(test/GPU/check_gradients_gpu.py). test/Differentiation/check_torch_reference.py
checks it against the numpy reference and the compiled float64 gradients on
the CPU.

Conventions (VARIANTS.md): a stacked parameter [G*H, K] holds the gates' [H, K]
blocks in the example's gate order; products are x @ W^T; sizes H, I and the
projection size come from the tensors' shapes.
"""
import torch

# Argument names of each example, in order (as in reference.EXAMPLES).
_LSTM = ['x', 'h0', 'c0', 'W', 'R', 'bW', 'bR']
_ONE = ['x', 'h0', 'W', 'R', 'bW', 'bR']

# Greff et al. (2015) variants: which gates have weights, in their stacking
# order (the block input is 'z'), which gates have peephole rows in P (in
# order), what the missing gates are, and the two activations g and h.
#   name          stacked  peepholes  flags
_GREFF = {
    'peephole':    ('ifzo', 'ifo', ''),
    'greff_nig':   ('fzo',  'fo',  ''),
    'greff_nfg':   ('izo',  'io',  ''),
    'greff_nog':   ('ifz',  'if',  ''),
    'greff_niaf':  ('ifzo', 'ifo', 'linear_g'),
    'greff_noaf':  ('ifzo', 'ifo', 'linear_h'),
    'greff_np':    ('ifzo', '',    ''),
    'greff_cifg':  ('izo',  'io',  'coupled'),
    'greff_fgr':   ('ifzo', 'ifo', 'full_recurrence'),
    'traditional': ('izo',  '',    ''),
}


# ---------------------------------------------------------------------------
# The time loop
# ---------------------------------------------------------------------------

def recur(step, x, state, reverse=False, lengths=None):
    """Runs the cell `step(x_t, state) -> (y_t, new_state)` over x [T, B, K].

    With `lengths` [B], row b takes part in steps t < lengths[b] only: at the
    other steps its state is carried over unchanged and its output is zero
    (pack_padded_sequence / pad_packed_sequence). `reverse` walks t from T-1
    down to 0, outputs staying at their own t. Returns (y [T, B, N], final
    state)."""
    T = x.shape[0]
    order = range(T - 1, -1, -1) if reverse else range(T)
    ys = [None] * T
    for t in order:
        y, new = step(x[t], state)
        if lengths is not None:
            active = (lengths > t).unsqueeze(1)
            new = tuple(torch.where(active, n, s) for n, s in zip(new, state))
            y = torch.where(active, y, torch.zeros_like(y))
        ys[t] = y
        state = new
    if T == 0:
        return x.new_zeros((0, x.shape[1], state[0].shape[-1])), state
    return torch.stack(ys), state


def _blocks(a, n):
    """The n equal row blocks of a stacked parameter."""
    return list(torch.chunk(a, n, dim=0))


# ---------------------------------------------------------------------------
# Cells
# ---------------------------------------------------------------------------

def lstm_cell(W, R, bW, bR, Whr=None):
    """nn.LSTM: gates i, f, g, o; c = f*c + i*g, h = o*tanh(c); with Whr the
    output is projected, h = (o*tanh(c)) Whr^T (LSTMP)."""
    def step(x, state):
        h, c = state
        a = torch.addmm(bW, x, W.t()) + torch.addmm(bR, h, R.t())
        ai, af, ag, ao = torch.chunk(a, 4, dim=1)
        c = torch.sigmoid(af) * c + torch.sigmoid(ai) * torch.tanh(ag)
        h = torch.sigmoid(ao) * torch.tanh(c)
        if Whr is not None:
            h = h @ Whr.t()
        return h, (h, c)
    return step


def greff_cell(cell, W, R, bW, bR, P=None, Rg=None):
    """Greff et al.'s vanilla LSTM with the change that `cell` names.

    Vanilla: z = g(W_z x + R_z h + b_z); i = sigma(W_i x + R_i h + p_i c + b_i);
    f likewise; c' = z i + c f; o = sigma(W_o x + R_o h + p_o c' + b_o);
    h' = h(c') o, with g = h = tanh. A gate without weights is the constant
    1, except CIFG's f = 1 - i. FGR: the state also holds the previous step's
    i, f, o, and the pre-activations of [i | f | o] get [i | f | o]_{t-1} Rg^T."""
    stacked, peeps, flag = _GREFF[cell]
    n = len(stacked)
    Wg = dict(zip(stacked, _blocks(W, n)))
    Rr = dict(zip(stacked, _blocks(R, n)))
    b = dict(zip(stacked, _blocks(bW + bR, n)))
    p = {a: P[k] for k, a in enumerate(peeps)} if peeps else {}
    g_act = (lambda v: v) if flag == 'linear_g' else torch.tanh
    h_act = (lambda v: v) if flag == 'linear_h' else torch.tanh
    fgr = flag == 'full_recurrence'

    def step(x, state):
        h, c = state[0], state[1]
        pre = {a: x @ Wg[a].t() + h @ Rr[a].t() + b[a] for a in stacked}
        if fgr:
            extra = torch.cat(state[2:5], dim=1) @ Rg.t()
            for k, a in enumerate('ifo'):
                pre[a] = pre[a] + extra[:, k * h.shape[1]:(k + 1) * h.shape[1]]

        def gate(a, peeped):
            if a not in stacked:
                return None
            v = pre[a]
            if a in p:
                v = v + p[a] * peeped
            return torch.sigmoid(v)

        z = g_act(pre['z'])
        i = gate('i', c)
        if flag == 'coupled':
            f = 1 - i
        else:
            f = gate('f', c)
        c_new = (z if i is None else z * i) + (c if f is None else c * f)
        o = gate('o', c_new)
        h_new = h_act(c_new) if o is None else h_act(c_new) * o
        if fgr:
            return h_new, (h_new, c_new, i, f, o)
        return h_new, (h_new, c_new)
    return step


def gru_cell(W, R, bW, bR):
    """nn.GRU (cuDNN): gates r, u, n; the reset multiplies R_n h + b_hn."""
    def step(x, state):
        (h,) = state
        xr, xu, xn = torch.chunk(torch.addmm(bW, x, W.t()), 3, dim=1)
        hr, hu, hn = torch.chunk(torch.addmm(bR, h, R.t()), 3, dim=1)
        r = torch.sigmoid(xr + hr)
        u = torch.sigmoid(xu + hu)
        n = torch.tanh(xn + r * hn)
        h = (1 - u) * n + u * h
        return h, (h,)
    return step


def cho_gru_cell(W, R, bW, bR):
    """Cho et al. (2014): the reset multiplies h before R_n."""
    Wr, Wu, Wn = _blocks(W, 3)
    Rr, Ru, Rn = _blocks(R, 3)
    br, bu, bn = _blocks(bW + bR, 3)

    def step(x, state):
        (h,) = state
        r = torch.sigmoid(x @ Wr.t() + h @ Rr.t() + br)
        u = torch.sigmoid(x @ Wu.t() + h @ Ru.t() + bu)
        n = torch.tanh(x @ Wn.t() + (r * h) @ Rn.t() + bn)
        h = (1 - u) * n + u * h
        return h, (h,)
    return step


def mgu_cell(W, R, bW, bR):
    """Minimal gated unit: gate f, candidate n = tanh(W_n x + R_n (f h) + b_n),
    h' = (1 - f) h + f n."""
    Wf, Wn = _blocks(W, 2)
    Rf, Rn = _blocks(R, 2)
    bf, bn = _blocks(bW + bR, 2)

    def step(x, state):
        (h,) = state
        f = torch.sigmoid(x @ Wf.t() + h @ Rf.t() + bf)
        n = torch.tanh(x @ Wn.t() + (f * h) @ Rn.t() + bn)
        h = (1 - f) * h + f * n
        return h, (h,)
    return step


def janet_cell(W, R, bW, bR, beta=1.0):
    """JANET (van der Westhuizen & Lasenby 2018), gate order f, c, state h = c:
    c' = sigmoid(s) * c + (1 - sigmoid(s - beta)) * tanh(W_c x + R_c c + b_c),
    s = W_f x + R_f c + b_f."""
    (Wf, Wc), (Rf, Rc) = _blocks(W, 2), _blocks(R, 2)
    (bWf, bWc), (bRf, bRc) = _blocks(bW, 2), _blocks(bR, 2)

    def step(x, s):
        (c,) = s
        pre_f = x @ Wf.T + bWf + c @ Rf.T + bRf
        cand = torch.tanh(x @ Wc.T + bWc + c @ Rc.T + bRc)
        c = torch.sigmoid(pre_f) * c + (1 - torch.sigmoid(pre_f - beta)) * cand
        return c, (c,)
    return step


def _layer_norm(v, gain, bias, eps=1e-5):
    """Normalises each row of v (biased variance), then (1 + gain) * v + bias."""
    centred = v - v.mean(dim=1, keepdim=True)
    var = (centred * centred).mean(dim=1, keepdim=True)
    return (1 + gain) * centred / torch.sqrt(var + eps) + bias


def layernorm_lstm_cell(W, R, bW, bR, gA, bA, gC, bC):
    """Layer-normalised LSTM (Ba et al. 2016): layer norm over the 4H
    pre-activations (gate order i, f, g, o) and over c before the output tanh."""
    def step(x, s):
        h, c = s
        a = _layer_norm(x @ W.T + bW + h @ R.T + bR, gA, bA)
        i, f, g, o = torch.chunk(a, 4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(_layer_norm(c, gC, bC))
        return h, (h, c)
    return step


def rnn_cell(act):
    """nn.RNN: h' = act(W x + b_ih + R h + b_hh)."""
    def make(W, R, bW, bR):
        def step(x, state):
            h = act(torch.addmm(bW, x, W.t()) + torch.addmm(bR, state[0], R.t()))
            return h, (h,)
        return step
    return make


# ---------------------------------------------------------------------------
# Examples
# ---------------------------------------------------------------------------

def _lstm(a):
    y, (h, c) = recur(lstm_cell(a['W'], a['R'], a['bW'], a['bR']), a['x'], (a['h0'], a['c0']))
    return [y, h, c]


def _varlen(a):
    lengths = a['lengths'].to(device=a['x'].device)
    y, (h, c) = recur(lstm_cell(a['W'], a['R'], a['bW'], a['bR']), a['x'],
                      (a['h0'], a['c0']), lengths=lengths)
    return [y, h, c]


def _lstmp(a):
    y, (h, c) = recur(lstm_cell(a['W'], a['R'], a['bW'], a['bR'], a['Whr']), a['x'],
                      (a['h0'], a['c0']))
    return [y, h, c]


def _stack3(a):
    y, hs, cs = a['x'], [], []
    for k in range(3):
        step = lstm_cell(a[f'W{k}'], a[f'R{k}'], a[f'bW{k}'], a[f'bR{k}'])
        y, (h, c) = recur(step, y, (a['h0'][k], a['c0'][k]))
        hs.append(h)
        cs.append(c)
    return [y, torch.stack(hs), torch.stack(cs)]


def _janet_stack3(a):
    y, hs = a['x'], []
    for k in range(3):
        step = janet_cell(a[f'W{k}'], a[f'R{k}'], a[f'bW{k}'], a[f'bR{k}'])
        y, (h,) = recur(step, y, (a['h0'][k],))
        hs.append(h)
    return [y, torch.stack(hs)]


_LN_PARAMS = ('W', 'R', 'bW', 'bR', 'gA', 'bA', 'gC', 'bC')


def _layernorm_stack2(a):
    y, hs, cs = a['x'], [], []
    for k in range(2):
        step = layernorm_lstm_cell(*(a[f'{n}{k}'] for n in _LN_PARAMS))
        y, (h, c) = recur(step, y, (a['h0'][k], a['c0'][k]))
        hs.append(h)
        cs.append(c)
    return [y, torch.stack(hs), torch.stack(cs)]


def _bidirectional(a):
    fw = lstm_cell(a['W'], a['R'], a['bW'], a['bR'])
    bw = lstm_cell(a['W_rev'], a['R_rev'], a['bW_rev'], a['bR_rev'])
    yf, (hf, cf) = recur(fw, a['x'], (a['h0'][0], a['c0'][0]))
    yb, (hb, cb) = recur(bw, a['x'], (a['h0'][1], a['c0'][1]), reverse=True)
    return [torch.cat([yf, yb], dim=2), torch.stack([hf, hb]), torch.stack([cf, cb])]


def _greff(cell):
    def run(a):
        fgr = cell == 'greff_fgr'
        state = (a['h0'], a['c0']) + ((a['i0'], a['f0'], a['o0']) if fgr else ())
        step = greff_cell(cell, a['W'], a['R'], a['bW'], a['bR'], a.get('P'), a.get('Rg'))
        y, s = recur(step, a['x'], state)
        return [y, s[0], s[1]]
    return run


def _one_state(make):
    def run(a):
        y, (h,) = recur(make(a['W'], a['R'], a['bW'], a['bR']), a['x'], (a['h0'],))
        return [y, h]
    return run


# cell -> (argument names in order, implementation)
EXAMPLES = {
    'lstm': (_LSTM, _lstm),
    'varlen': (['x', 'lengths', 'h0', 'c0', 'W', 'R', 'bW', 'bR'], _varlen),
    'lstmp': (_LSTM + ['Whr'], _lstmp),
    'stack3': (['x', 'h0', 'c0'] + [f'{n}{k}' for k in range(3) for n in ('W', 'R', 'bW', 'bR')],
               _stack3),
    'janet_stack3': (['x', 'h0'] + [f'{n}{k}' for k in range(3) for n in ('W', 'R', 'bW', 'bR')],
                     _janet_stack3),
    'layernorm_stack2': (['x', 'h0', 'c0'] + [f'{n}{k}' for k in range(2) for n in _LN_PARAMS],
                         _layernorm_stack2),
    'bidirectional': (_LSTM + ['W_rev', 'R_rev', 'bW_rev', 'bR_rev'], _bidirectional),
    'gru': (_ONE, _one_state(gru_cell)),
    'cho_gru': (_ONE, _one_state(cho_gru_cell)),
    'mgu': (_ONE, _one_state(mgu_cell)),
    'rnn_tanh': (_ONE, _one_state(rnn_cell(torch.tanh))),
    'rnn_relu': (_ONE, _one_state(rnn_cell(torch.relu))),
}
for _cell, (_stacked, _peeps, _flag) in _GREFF.items():
    _names = ['x', 'h0', 'c0'] + (['i0', 'f0', 'o0'] if _flag == 'full_recurrence' else [])
    _names += ['W', 'R', 'bW', 'bR'] + (['P'] if _peeps else [])
    _names += ['Rg'] if _flag == 'full_recurrence' else []
    EXAMPLES[_cell] = (_names, _greff(_cell))


def arg_names(cell):
    """The argument names of example `cell`, in order."""
    return list(EXAMPLES[cell][0])


def forward(cell, tensors):
    """The results of example `cell` on `tensors` (its arguments in order)."""
    names, run = EXAMPLES[cell]
    if len(tensors) != len(names):
        raise ValueError(f'{cell} takes {len(names)} arguments ({", ".join(names)}), '
                         f'got {len(tensors)}')
    return run(dict(zip(names, tensors)))

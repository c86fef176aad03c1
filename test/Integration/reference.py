"""Float64 numpy reference for every example in examples/.

Written from docs/VARIANTS.md (the semantics of each cell), independently of the
.mlir files. For each example, EXAMPLES[name] gives
  args:  [(name, shape, kind)], shape entries are ints or 'T' / 'B', kind is
         'data' (inputs, initial states), 'weight' or 'lengths';
  fn:    fn(**float64 arrays) -> list of expected results, in order.
"""
import numpy as np

H, I, P = 128, 64, 64  # hidden size, input size, LSTMP projection size


def sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def identity(a):
    return a


def split(a, n):
    """The n stacked [H, ...] blocks of a [n*H, ...] parameter, in order."""
    return np.split(a, n, axis=0)


# ---------------------------------------------------------------------------
# The recurrence
# ---------------------------------------------------------------------------

def run_layer(step, xs, state, reverse=False, lengths=None):
    """Runs step(x_t, state) -> (out, new_state) over xs [T, B, K].

    reverse walks t = T-1 .. 0 (outputs kept at index t). With lengths, rows b with
    t >= lengths[b] keep their state and get a zero output (packed sequences).
    Returns (outputs [T, B, N], final state tuple)."""
    T = xs.shape[0]
    ys = [None] * T
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        out, new = step(xs[t], state)
        if lengths is not None:
            live = (t < lengths)[:, None]
            new = tuple(np.where(live, n, s) for n, s in zip(new, state))
            out = np.where(live, out, 0.0)
        ys[t], state = out, new
    return np.stack(ys), state


# ---------------------------------------------------------------------------
# Cells: each returns step(x_t, state) -> (h_t, new state)
# ---------------------------------------------------------------------------

def torch_lstm(W, R, bW, bR, Whr=None):
    """nn.LSTM: one stacked GEMM per operand, gate order i, f, g, o; optional projection."""
    def step(x, s):
        h, c = s
        i, f, g, o = np.split(x @ W.T + bW + h @ R.T + bR, 4, axis=1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        if Whr is not None:
            h = h @ Whr.T
        return h, (h, c)
    return step


# Greff et al. variants: which gates have weights (stacking order) and peepholes.
GREFF = {
    #  name          variant     stacked  peepholes
    'peephole':    ('vanilla',   'ifzo',  'ifo'),
    'greff_nig':   ('nig',       'fzo',   'fo'),
    'greff_nfg':   ('nfg',       'izo',   'io'),
    'greff_nog':   ('nog',       'ifz',   'if'),
    'greff_niaf':  ('niaf',      'ifzo',  'ifo'),
    'greff_noaf':  ('noaf',      'ifzo',  'ifo'),
    'greff_np':    ('np',        'ifzo',  ''),
    'greff_cifg':  ('cifg',      'izo',   'io'),
    'greff_fgr':   ('fgr',       'ifzo',  'ifo'),
    'traditional': ('nfg+np',    'izo',   ''),
}


def greff(variant, gates, peeps, W, R, bW, bR, Pm=None, Rg=None):
    """Greff et al. (2015) cell, per gate. Missing gates are the constant 1
    (CIFG: f = 1 - i). With Rg (FGR) the state is (h, c, i, f, o) and gate a in
    {i, f, o} gets sum_s Rg[a, s] s_{t-1}."""
    Wd, Rd = dict(zip(gates, split(W, len(gates)))), dict(zip(gates, split(R, len(gates))))
    bd = dict(zip(gates, split(bW + bR, len(gates))))
    pd = dict(zip(peeps, Pm)) if peeps else {}
    g = identity if variant == 'niaf' else np.tanh
    h_act = identity if variant == 'noaf' else np.tanh
    if Rg is not None:
        Rgd = {(a, s): Rg[ka * H:(ka + 1) * H, ks * H:(ks + 1) * H]
               for ka, a in enumerate('ifo') for ks, s in enumerate('ifo')}

    def step(x, state):
        h, c = state[:2]
        prev = dict(zip('ifo', state[2:]))

        def pre(a):
            v = x @ Wd[a].T + h @ Rd[a].T + bd[a]
            for s, act in prev.items():
                v = v + act @ Rgd[a, s].T
            return v

        def gate(a, cell):
            if a not in gates:
                return np.ones_like(c)
            return sigmoid(pre(a) + (pd[a] * cell if a in pd else 0.0))

        z = g(x @ Wd['z'].T + h @ Rd['z'].T + bd['z'])
        i = gate('i', c)
        f = 1.0 - i if variant == 'cifg' else gate('f', c)
        c_new = z * i + c * f
        o = gate('o', c_new)
        h_new = h_act(c_new) * o
        return h_new, (h_new, c_new) + ((i, f, o) if Rg is not None else ())
    return step


def torch_gru(W, R, bW, bR):
    """nn.GRU: gate order r, z, n; reset applied to (R_n h + b_hn)."""
    def step(x, s):
        (h,) = s
        xr, xz, xn = np.split(x @ W.T + bW, 3, axis=1)
        hr, hz, hn = np.split(h @ R.T + bR, 3, axis=1)
        r, z = sigmoid(xr + hr), sigmoid(xz + hz)
        n = np.tanh(xn + r * hn)
        h = (1.0 - z) * n + z * h
        return h, (h,)
    return step


def cho_gru(W, R, bW, bR):
    """Cho et al. 2014: reset applied to h before the recurrent GEMM."""
    (Wr, Wz, Wn), (Rr, Rz, Rn), b = split(W, 3), split(R, 3), split(bW + bR, 3)

    def step(x, s):
        (h,) = s
        r = sigmoid(x @ Wr.T + h @ Rr.T + b[0])
        z = sigmoid(x @ Wz.T + h @ Rz.T + b[1])
        n = np.tanh(x @ Wn.T + (r * h) @ Rn.T + b[2])
        h = (1.0 - z) * n + z * h
        return h, (h,)
    return step


def mgu(W, R, bW, bR):
    """Minimal gated unit, gate order f, n."""
    (Wf, Wn), (Rf, Rn), (bf, bn) = split(W, 2), split(R, 2), split(bW + bR, 2)

    def step(x, s):
        (h,) = s
        f = sigmoid(x @ Wf.T + h @ Rf.T + bf)
        n = np.tanh(x @ Wn.T + (f * h) @ Rn.T + bn)
        h = (1.0 - f) * h + f * n
        return h, (h,)
    return step


def rnn(act):
    """nn.RNN with the given nonlinearity."""
    def cell(W, R, bW, bR):
        def step(x, s):
            h = act(x @ W.T + bW + s[0] @ R.T + bR)
            return h, (h,)
        return step
    return cell


def relu(a):
    return np.maximum(a, 0.0)


def janet(W, R, bW, bR, beta=1.0):
    """JANET (van der Westhuizen & Lasenby 2018), gate order f, c; h = c."""
    (Wf, Wc), (Rf, Rc), (bf, bc) = split(W, 2), split(R, 2), split(bW + bR, 2)

    def step(x, s):
        (c,) = s
        sf = x @ Wf.T + c @ Rf.T + bf
        cand = np.tanh(x @ Wc.T + c @ Rc.T + bc)
        c = sigmoid(sf) * c + (1.0 - sigmoid(sf - beta)) * cand
        return c, (c,)
    return step


def layer_norm(v, g, b, eps=1e-5):
    """Layer norm over the features of each row, gain 1 + g, bias b."""
    mu = v.mean(axis=1, keepdims=True)
    var = ((v - mu) ** 2).mean(axis=1, keepdims=True)
    return (1.0 + g) * (v - mu) / np.sqrt(var + eps) + b


def layernorm_lstm(W, R, bW, bR, gA, bA, gC, bC):
    """Layer-normalised LSTM: LN over the 4H pre-activations (gate order i, f, g, o)
    and over c_t before the output tanh."""
    def step(x, s):
        h, c = s
        i, f, g, o = np.split(layer_norm(x @ W.T + bW + h @ R.T + bR, gA, bA), 4, axis=1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(layer_norm(c, gC, bC))
        return h, (h, c)
    return step


# ---------------------------------------------------------------------------
# Examples: argument specs and expected results
# ---------------------------------------------------------------------------

def data(name, *shape):
    return (name, shape, 'data')


def weight(name, *shape):
    return (name, shape, 'weight')


def params(G, K, h=H, sfx=''):
    """W [G*H, K], R [G*H, h], bW, bR [G*H] (nn.LSTM / nn.GRU layout)."""
    return [weight('W' + sfx, G * H, K), weight('R' + sfx, G * H, h),
            weight('bW' + sfx, G * H), weight('bR' + sfx, G * H)]


X = data('x', 'T', 'B', I)
EXAMPLES = {}


def example(name, args):
    def register(fn):
        EXAMPLES[name] = (args, fn)
        return fn
    return register


@example('lstm', [X, data('h0', 'B', H), data('c0', 'B', H)] + params(4, I))
def _lstm(x, h0, c0, W, R, bW, bR):
    y, (h, c) = run_layer(torch_lstm(W, R, bW, bR), x, (h0, c0))
    return [y, h, c]


@example('varlen', [X, ('lengths', ('B',), 'lengths'), data('h0', 'B', H),
                    data('c0', 'B', H)] + params(4, I))
def _varlen(x, lengths, h0, c0, W, R, bW, bR):
    y, (h, c) = run_layer(torch_lstm(W, R, bW, bR), x, (h0, c0), lengths=lengths)
    return [y, h, c]


@example('lstmp', [X, data('h0', 'B', P), data('c0', 'B', H)] + params(4, I, h=P) +
         [weight('Whr', P, H)])
def _lstmp(x, h0, c0, W, R, bW, bR, Whr):
    y, (h, c) = run_layer(torch_lstm(W, R, bW, bR, Whr), x, (h0, c0))
    return [y, h, c]


@example('stack3', [X, data('h0', 3, 'B', H), data('c0', 3, 'B', H)] +
         [a for k in range(3) for a in params(4, I if k == 0 else H, sfx=str(k))])
def _stack3(x, h0, c0, **w):
    hs, cs = [], []
    for k in range(3):
        step = torch_lstm(w[f'W{k}'], w[f'R{k}'], w[f'bW{k}'], w[f'bR{k}'])
        x, (h, c) = run_layer(step, x, (h0[k], c0[k]))
        hs.append(h)
        cs.append(c)
    return [x, np.stack(hs), np.stack(cs)]


def one_state_stack(cell, G, L):
    """(argument specs, reference) of L layers of a cell of one state and G
    gates, each reading the previous one's output: x, h0 [L, B, H], then per
    layer W, R, bW, bR."""
    args = [X, data('h0', L, 'B', H)] + \
        [a for k in range(L) for a in params(G, I if k == 0 else H, sfx=str(k))]

    def fn(x, h0, **w):
        hs = []
        for k in range(L):
            x, (h,) = run_layer(cell(w[f'W{k}'], w[f'R{k}'], w[f'bW{k}'], w[f'bR{k}']), x,
                                (h0[k],))
            hs.append(h)
        return [x, np.stack(hs)]
    return args, fn


EXAMPLES['janet_stack3'] = one_state_stack(janet, 2, 3)


@example('layernorm_stack2', [X, data('h0', 2, 'B', H), data('c0', 2, 'B', H)] +
         [a for k in range(2) for a in
          params(4, I if k == 0 else H, sfx=str(k)) +
          [weight(f'gA{k}', 4 * H), weight(f'bA{k}', 4 * H), weight(f'gC{k}', H),
           weight(f'bC{k}', H)]])
def _layernorm_stack2(x, h0, c0, **w):
    hs, cs = [], []
    for k in range(2):
        step = layernorm_lstm(*(w[f'{n}{k}'] for n in ('W', 'R', 'bW', 'bR', 'gA', 'bA',
                                                        'gC', 'bC')))
        x, (h, c) = run_layer(step, x, (h0[k], c0[k]))
        hs.append(h)
        cs.append(c)
    return [x, np.stack(hs), np.stack(cs)]


@example('bidirectional', [X, data('h0', 2, 'B', H), data('c0', 2, 'B', H)] +
         params(4, I) + params(4, I, sfx='_rev'))
def _bidirectional(x, h0, c0, W, R, bW, bR, W_rev, R_rev, bW_rev, bR_rev):
    yf, (hf, cf) = run_layer(torch_lstm(W, R, bW, bR), x, (h0[0], c0[0]))
    yb, (hb, cb) = run_layer(torch_lstm(W_rev, R_rev, bW_rev, bR_rev), x, (h0[1], c0[1]),
                             reverse=True)
    return [np.concatenate([yf, yb], axis=2), np.stack([hf, hb]), np.stack([cf, cb])]


def _greff_example(name, variant, gates, peeps):
    fgr = variant == 'fgr'
    args = [X, data('h0', 'B', H), data('c0', 'B', H)]
    args += [data(n, 'B', H) for n in ('i0', 'f0', 'o0')] if fgr else []
    args += params(len(gates), I)
    args += [weight('P', len(peeps), H)] if peeps else []
    args += [weight('Rg', 3 * H, 3 * H)] if fgr else []

    def fn(x, h0, c0, W, R, bW, bR, P=None, Rg=None, i0=None, f0=None, o0=None):
        v = 'np' if variant == 'nfg+np' else variant
        state = (h0, c0) + ((i0, f0, o0) if fgr else ())
        y, s = run_layer(greff(v, gates, peeps, W, R, bW, bR, P, Rg), x, state)
        return [y, s[0], s[1]]
    EXAMPLES[name] = (args, fn)


for _name, _spec in GREFF.items():
    _greff_example(_name, *_spec)


def _one_state_example(name, G, cell):
    @example(name, [X, data('h0', 'B', H)] + params(G, I))
    def fn(x, h0, W, R, bW, bR):
        y, (h,) = run_layer(cell(W, R, bW, bR), x, (h0,))
        return [y, h]


# Networks that bench/make_network.py writes (no file in examples/: the
# tests generate them), by the same conventions; make_inputs and expected
# take their names too (spec_of).
NETWORKS = {'cho_gru_stack3': one_state_stack(cho_gru, 3, 3)}


def lstm_network(layers, bidirectional=False, proj=None, lengths=False):
    """(argument specs, reference) of nn.LSTM(I, H, layers, bidirectional,
    proj_size=proj) in lstmc.Network's argument order: x, [lengths], h0
    [L·D, B, P or H], c0 [L·D, B, H], then per layer and direction W, R, bW,
    bR[, Whr]; each layer reads the previous one's (masked) outputs."""
    D = 2 if bidirectional else 1
    hw = proj or H
    args = [X] + ([('lengths', ('B',), 'lengths')] if lengths else [])
    args += [data('h0', layers * D, 'B', hw), data('c0', layers * D, 'B', H)]
    for k in range(layers):
        for sfx in ([str(k), f'{k}_rev'] if bidirectional else [str(k)]):
            args += params(4, I if k == 0 else D * hw, h=hw, sfx=sfx)
            if proj:
                args.append(weight('Whr' + sfx, proj, H))

    def run(x, h0, c0, lengths=None, **w):
        hs, cs = [], []
        for k in range(layers):
            ys = []
            for d, sfx in enumerate([str(k), f'{k}_rev'][:D]):
                step = torch_lstm(w['W' + sfx], w['R' + sfx], w['bW' + sfx],
                                  w['bR' + sfx], w.get('Whr' + sfx))
                y, (h, c) = run_layer(step, x, (h0[k * D + d], c0[k * D + d]),
                                      reverse=d == 1, lengths=lengths)
                ys.append(y)
                hs.append(h)
                cs.append(c)
            x = np.concatenate(ys, axis=2)
        return [x, np.stack(hs), np.stack(cs)]
    return args, run


def _ln_lstm_stack2(x, h0, c0, **w):
    """lstmc.cells.ln_lstm, two layers: gain g (not 1 + g), one bias b."""
    hs, cs = [], []
    for k in range(2):
        step = layernorm_lstm(w[f'W{k}'], w[f'R{k}'], w[f'b{k}'], 0.0, w[f'g{k}'] - 1.0,
                              w[f's{k}'], w[f'g_c{k}'] - 1.0, w[f's_c{k}'])
        x, (h, c) = run_layer(step, x, (h0[k], c0[k]))
        hs.append(h)
        cs.append(c)
    return [x, np.stack(hs), np.stack(cs)]


# The gains are drawn as data, U(-1, 1): as weights (U(-1/sqrt(H), ...))
# they would scale the normalised values nearly to zero.
NETWORKS['ln_lstm_stack2'] = (
    [X, data('h0', 2, 'B', H), data('c0', 2, 'B', H)] +
    [a for k in range(2) for a in
     [weight(f'W{k}', 4 * H, I if k == 0 else H), weight(f'R{k}', 4 * H, H),
      weight(f'b{k}', 4 * H), data(f'g{k}', 4 * H), weight(f's{k}', 4 * H),
      data(f'g_c{k}', H), weight(f's_c{k}', H)]],
    _ln_lstm_stack2)
NETWORKS['varlen_stack2'] = lstm_network(2, lengths=True)
NETWORKS['lstmp_stack2'] = lstm_network(2, proj=P)
NETWORKS['varlen_lstmp_bidirectional2'] = lstm_network(2, bidirectional=True, proj=P,
                                                       lengths=True)


def spec_of(name):
    """(argument specs, reference function) of an example or a network."""
    return EXAMPLES[name] if name in EXAMPLES else NETWORKS[name]


_one_state_example('gru', 3, torch_gru)
_one_state_example('cho_gru', 3, cho_gru)
_one_state_example('mgu', 2, mgu)
_one_state_example('rnn_tanh', 1, rnn(np.tanh))
_one_state_example('rnn_relu', 1, rnn(relu))


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------

def make_inputs(name, T, B, rng):
    """Random inputs for example `name` as float32 / int32 arrays, in argument order:
    weights ~ U(-1/sqrt(H), 1/sqrt(H)), data ~ U(-1, 1), lengths in [1, T] with
    max = T and, when possible, at least one row shorter."""
    out = []
    for _, shape, kind in spec_of(name)[0]:
        shape = tuple(T if d == 'T' else B if d == 'B' else d for d in shape)
        if kind == 'lengths':
            a = rng.integers(1, T + 1, size=B)
            a[rng.integers(B)] = T
            if B > 1 and T > 1 and (a == T).all():  # B > 1: some row stays at T
                a[rng.integers(B)] = rng.integers(1, T)
            out.append(a.astype(np.int32))
        else:
            k = 1.0 / np.sqrt(H) if kind == 'weight' else 1.0
            out.append(rng.uniform(-k, k, size=shape).astype(np.float32))
    return out


def expected(name, inputs):
    """Float64 reference results of example `name` for the given inputs."""
    args, fn = spec_of(name)
    kw = {n: (a.astype(np.float64) if a.dtype.kind == 'f' else a)
          for (n, _, _), a in zip(args, inputs)}
    return fn(**kw)

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes a stacked network of the benchmark configurations as lstm-dialect IR.

  make_network.py --cell {lstm,peephole,cho_gru} --layers L --hidden H --input I -o net.mlir

Layout (PyTorch's, T and B dynamic): @forward(x [T,B,I], h0 [L,B,H] (, c0 [L,B,H]),
then per layer W_l [G*H, I_l], R_l [G*H, H], bW_l [G*H], bR_l [G*H] (, P_l [3,H] for
the peephole cell)) -> (y [T,B,H], hT [L,B,H] (, cT [L,B,H])). Gate orders: LSTM i,f,g,o;
GRU r,z,n. The cells are those of examples/lstm.mlir, peephole.mlir, cho_gru.mlir.
"""
import argparse

GATES = {'lstm': 4, 'peephole': 4, 'cho_gru': 3}


def t(*dims):
    return 'tensor<' + 'x'.join(str(d) for d in dims) + 'xf32>'


def layer(cell, l, H, I, out):
    G = GATES[cell]
    S, X = t('?', H), t('?', I)
    names = ['i', 'f', 'g', 'o'] if G == 4 else ['r', 'z', 'n']
    for k, g in enumerate(names):
        out.append(f'  %W{g}{l} = tensor.extract_slice %W{l}[{k * H}, 0] [{H}, {I}] [1, 1] : {t(G * H, I)} to {t(H, I)}')
        out.append(f'  %R{g}{l} = tensor.extract_slice %R{l}[{k * H}, 0] [{H}, {H}] [1, 1] : {t(G * H, H)} to {t(H, H)}')
        out.append(f'  %bW{g}{l} = tensor.extract_slice %bW{l}[{k * H}] [{H}] [1] : {t(G * H)} to {t(H)}')
        out.append(f'  %bR{g}{l} = tensor.extract_slice %bR{l}[{k * H}] [{H}] [1] : {t(G * H)} to {t(H)}')
    if cell == 'peephole':
        for k, g in enumerate(['i', 'f', 'o']):
            out.append(f'  %P{g}{l} = tensor.extract_slice %P{l}[{k}, 0] [1, {H}] [1, 1] : {t(3, H)} to {t(H)}')
    inp = '%x' if l == 0 else f'%y{l - 1}'
    seq_in = t('?', '?', I)
    gate = lambda act, g, peep='': (
        f'lstm.gate {act} (%xt, %h : {X}, {S}) weights(%W{g}{l}, %R{g}{l} : {t(H, I)}, {t(H, H)}) '
        f'bias(%bW{g}{l}, %bR{g}{l} : {t(H)}, {t(H)}){peep} -> {S}')
    if cell in ('lstm', 'peephole'):
        pi = f' peephole(%Pi{l}, %c : {t(H)}, {S})' if cell == 'peephole' else ''
        pf = f' peephole(%Pf{l}, %c : {t(H)}, {S})' if cell == 'peephole' else ''
        po = f' peephole(%Po{l}, %cn : {t(H)}, {S})' if cell == 'peephole' else ''
        out += [
            f'  %y{l}, %hT{l}, %cT{l} = lstm.layer forward ins({inp} : {seq_in}) init(%h0_{l}, %c0_{l} : {S}, {S}) -> ({t("?", "?", H)}), ({S}, {S}) {{',
            f'  ^bb0(%xt: {X}, %h: {S}, %c: {S}):',
            f'    %i = {gate("sigmoid", "i", pi)}',
            f'    %f = {gate("sigmoid", "f", pf)}',
            f'    %g = {gate("tanh", "g")}',
            f'    %ig = arith.mulf %i, %g : {S}',
            f'    %fc = arith.mulf %f, %c : {S}',
            f'    %cn = arith.addf %fc, %ig : {S}',
            f'    %o = {gate("sigmoid", "o", po)}',
            f'    %tc = math.tanh %cn : {S}',
            f'    %hn = arith.mulf %o, %tc : {S}',
            f'    lstm.yield out(%hn : {S}) state(%hn, %cn : {S}, {S})',
            '  }']
    else:  # Cho et al.'s GRU: n = tanh(W_n x + R_n (r * h) + b_n)
        out += [
            f'  %y{l}, %hT{l} = lstm.layer forward ins({inp} : {seq_in}) init(%h0_{l} : {S}) -> ({t("?", "?", H)}), ({S}) {{',
            f'  ^bb0(%xt: {X}, %h: {S}):',
            f'    %r = {gate("sigmoid", "r")}',
            f'    %z = {gate("sigmoid", "z")}',
            f'    %rh = arith.mulf %r, %h : {S}',
            f'    %n = lstm.gate tanh (%xt, %rh : {X}, {S}) weights(%Wn{l}, %Rn{l} : {t(H, I)}, {t(H, H)}) '
            f'bias(%bWn{l}, %bRn{l} : {t(H)}, {t(H)}) -> {S}',
            f'    %zc = lstm.one_minus %z : {S}',
            f'    %a = arith.mulf %zc, %n : {S}',
            f'    %b = arith.mulf %z, %h : {S}',
            f'    %hn = arith.addf %a, %b : {S}',
            f'    lstm.yield out(%hn : {S}) state(%hn : {S})',
            '  }']


def network(cell, L, H, I):
    G = GATES[cell]
    has_c = cell != 'cho_gru'
    args = [f'%x: {t("?", "?", I)}', f'%h0: {t(L, "?", H)}'] + ([f'%c0: {t(L, "?", H)}'] if has_c else [])
    for l in range(L):
        il = I if l == 0 else H
        args += [f'%W{l}: {t(G * H, il)}', f'%R{l}: {t(G * H, H)}', f'%bW{l}: {t(G * H)}', f'%bR{l}: {t(G * H)}']
        if cell == 'peephole':
            args.append(f'%P{l}: {t(3, H)}')
    states = [('h', 'hT')] + ([('c', 'cT')] if has_c else [])
    results = [t('?', '?', H)] + [t(L, '?', H)] * len(states)
    out = [f'func.func @forward({", ".join(args)}) -> ({", ".join(results)}) {{',
           '  %c1 = arith.constant 1 : index',
           f'  %B = tensor.dim %h0, %c1 : {t(L, "?", H)}']
    for l in range(L):
        for s, _ in states:
            out.append(f'  %{s}0_{l} = tensor.extract_slice %{s}0[{l}, 0, 0] [1, %B, {H}] [1, 1, 1] : {t(L, "?", H)} to {t("?", H)}')
    for l in range(L):
        layer(cell, l, H, I if l == 0 else H, out)
    rets = [f'%y{L - 1}']
    for s, final in states:
        acc = f'%{final}_empty'
        out.append(f'  {acc} = tensor.empty(%B) : {t(L, "?", H)}')
        for l in range(L):
            nxt = f'%{final}_acc{l}'
            out.append(f'  {nxt} = tensor.insert_slice %{final}{l} into {acc}[{l}, 0, 0] [1, %B, {H}] [1, 1, 1] : {t("?", H)} into {t(L, "?", H)}')
            acc = nxt
        rets.append(acc)
    out.append(f'  return {", ".join(rets)} : {", ".join(results)}')
    out.append('}')
    return '\n'.join(out) + '\n'


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--cell', choices=sorted(GATES), required=True)
    p.add_argument('--layers', type=int, required=True)
    p.add_argument('--hidden', type=int, required=True)
    p.add_argument('--input', type=int, required=True)
    p.add_argument('-o', '--output', required=True)
    a = p.parse_args()
    with open(a.output, 'w') as f:
        f.write(network(a.cell, a.layers, a.hidden, a.input))


if __name__ == '__main__':
    main()

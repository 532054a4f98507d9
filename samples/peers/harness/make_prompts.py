#!/usr/bin/env python3
"""Writes data/emu_prompts_1024.jsonl and emu_prompts_256.jsonl: 16 lines of
{"text": "<N vocabulary words>"} each, drawn with random.Random(0) from the
non-special entries of the corpus WordLevel tokenizer (so every prompt is
exactly N tokens for genai-perf's re-tokenization and for the emulator)."""
import json, random
from transformers import AutoTokenizer
tok = json.load(open('tokenizer/tokenizer.json'))
vocab = [w for w in tok['model']['vocab'] if not w.startswith('<')]
rng = random.Random(0)
t = AutoTokenizer.from_pretrained('/tmp/genai/tokenizer')
for n_in, name in ((1024, 'emu_prompts_1024.jsonl'), (256, 'emu_prompts_256.jsonl')):
    with open('data/' + name, 'w') as f:
        for i in range(16):
            text = ' '.join(rng.choice(vocab) for _ in range(n_in))
            assert len(t.encode(text)) == n_in
            f.write(json.dumps({'text': text}) + '\n')

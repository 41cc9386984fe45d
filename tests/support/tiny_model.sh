# tiny_model.sh: sourced by end-to-end tests; `tiny_model DIR` trains a toy En->De model directory
# (word-for-word "translations", a vocabulary of 48 pieces, d_model 32, one layer a side) in a few
# seconds with `$NMT train`, into DIR (corpus files DIR.train.en / DIR.train.de beside it).
# `tiny_corpus PREFIX [PAIRS] [SEED]` writes only the corpus, PREFIX.train.en and PREFIX.train.de (400
# pairs from awk's srand(7) unless told otherwise). `tiny_config FILE OUTPUT` writes a config that
# trains a smaller model still on toy.train.* (tiny_corpus toy) for 20 steps, a checkpoint every 10
# (the last 2 kept), into OUTPUT.
tiny_corpus() {
  awk -v prefix="$1" -v pairs="${2:-400}" -v seed="${3:-7}" 'BEGIN {
    srand(seed); n = split("the a cat dog sees likes big small red blue house tree runs sleeps", en, " ");
    split("der ein katze hund sieht mag gross klein rot blau haus baum rennt schlaeft", de, " ");
    for (i = 0; i < pairs; i++) {
      len = 2 + int(rand() * 5); s = ""; t = "";
      for (j = 0; j < len; j++) { w = 1 + int(rand() * n); s = s (j ? " " : "") en[w]; t = t (j ? " " : "") de[w] }
      print s > (prefix ".train.en"); print t > (prefix ".train.de")
    } }'
}
tiny_config() {
  cat >"$1" <<YAML
model: {d_model: 16, heads: 2, ffn: 32, encoder_layers: 1, decoder_layers: 1}
vocab: {size: 40}
data:
  train: {src: toy.train.en, tgt: toy.train.de}
train:
  batch_tokens: 300
  max_steps: 20
  valid_every: 1000
  save_every: 10
  keep_last: 2
output: $2
YAML
}
tiny_model() {
  local dir=$1
  tiny_corpus "$dir"
  cat >"$dir.yaml" <<YAML
model: {d_model: 32, heads: 2, ffn: 64, encoder_layers: 1, decoder_layers: 1, dropout: 0.0}
vocab: {size: 48}
data:
  train: {src: $dir.train.en, tgt: $dir.train.de}
train:
  batch_tokens: 512
  max_steps: 400
  valid_every: 1000
  save_every: 1000
  optimizer: {lr: 0.005, warmup: 20}
output: $dir
YAML
  "$NMT" train "$dir.yaml" --threads 1 --quiet >"$dir.train.out" 2>&1 || { echo "FAIL nmt train"; cat "$dir.train.out"; exit 1; }
}

# tiny_model.sh: sourced by end-to-end tests; one function, `tiny_model`, makes every toy model and
# corpus they use (the C tests' tiny models: tiny_model.h):
#   tiny_model DIR            trains a toy En->De model directory (word-for-word "translations", a
#                             vocabulary of 48 pieces, d_model 32, one layer a side) in a few seconds
#                             with `$NMT train`, into DIR (config DIR.yaml and corpus DIR.train.en /
#                             DIR.train.de beside it)
#   tiny_model --corpus PREFIX [PAIRS] [SEED]
#                             only the corpus, PREFIX.train.en and PREFIX.train.de (400 pairs from
#                             awk's srand(7) unless told otherwise)
#   tiny_model --config FILE OUTPUT
#                             only a config that trains a smaller model still (vocabulary 40, d_model
#                             16) on toy.train.* (tiny_model --corpus toy) for 20 steps, a checkpoint
#                             every 10 (the last 2 kept), into OUTPUT
#   tiny_model --constant FILE VALUE [HEADS]
#                             a model file whose every parameter is VALUE (nmt-gen-model)
tiny_model() {
  case $1 in
    --corpus) shift; tiny_model_corpus "$@" ;;
    --config) tiny_model_yaml "$2" "d_model: 16, heads: 2, ffn: 32, encoder_layers: 1, decoder_layers: 1" 40 toy "$3" \
                "batch_tokens: 300" "max_steps: 20" "valid_every: 1000" "save_every: 10" "keep_last: 2" ;;
    --constant) shift; "$NMT_BIN_DIR/nmt-gen-model" "$@" ;;
    *)
      local dir=$1
      tiny_model_corpus "$dir"
      tiny_model_yaml "$dir.yaml" "d_model: 32, heads: 2, ffn: 64, encoder_layers: 1, decoder_layers: 1, dropout: 0.0" 48 \
        "$dir" "$dir" "batch_tokens: 512" "max_steps: 400" "valid_every: 1000" "save_every: 1000" \
        "optimizer: {lr: 0.005, warmup: 20}"
      "$NMT" train "$dir.yaml" --threads 1 --quiet >"$dir.train.out" 2>&1 || { echo "FAIL nmt train"; cat "$dir.train.out"; exit 1; }
      ;;
  esac
}

# PREFIX [PAIRS] [SEED]: sentences of 2 .. 6 words and their word-for-word translations.
tiny_model_corpus() {
  awk -v prefix="$1" -v pairs="${2:-400}" -v seed="${3:-7}" 'BEGIN {
    srand(seed); n = split("the a cat dog sees likes big small red blue house tree runs sleeps", en, " ");
    split("der ein katze hund sieht mag gross klein rot blau haus baum rennt schlaeft", de, " ");
    for (i = 0; i < pairs; i++) {
      len = 2 + int(rand() * 5); s = ""; t = "";
      for (j = 0; j < len; j++) { w = 1 + int(rand() * n); s = s (j ? " " : "") en[w]; t = t (j ? " " : "") de[w] }
      print s > (prefix ".train.en"); print t > (prefix ".train.de")
    } }'
}

# FILE MODEL VOCAB CORPUS_PREFIX OUTPUT TRAIN_SETTING...: a training config.
tiny_model_yaml() {
  local file=$1 model=$2 vocab=$3 corpus=$4 output=$5
  shift 5
  {
    echo "model: {$model}"
    echo "vocab: {size: $vocab}"
    echo "data:"
    echo "  train: {src: $corpus.train.en, tgt: $corpus.train.de}"
    echo "train:"
    printf '  %s\n' "$@"
    echo "output: $output"
  } >"$file"
}

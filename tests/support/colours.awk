# A toy parallel corpus for the end-to-end tests: English colour words, German targets word for word.
# awk -v n=400 -v seed=1 -v src=train.en -v tgt=train.de -f tests/support/colours.awk
BEGIN {
  srand(seed)
  split("red blue green white black yellow brown grey", e, " ")
  split("rot blau grün weiß schwarz gelb braun grau", g, " ")
  for (i = 0; i < n; i++) {
    w = 3 + int(rand() * 5); s = ""; t = ""
    for (j = 0; j < w; j++) { k = 1 + int(rand() * 8); s = s (j ? " " : "") e[k]; t = t (j ? " " : "") g[k] }
    print s > src; print t > tgt
  }
}

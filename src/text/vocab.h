/* vocab: the ids every nmt vocabulary reserves for its special pieces.
 *
 * They sit below both the SentencePiece shim (which trains vocabularies with these ids and refuses
 * others) and the model (whose rows start and end with them), so that neither includes the other.
 * A source row is pieces + eos; a decoder input is bos + pieces; a target is pieces + eos.
 */
#ifndef NMT_VOCAB_H
#define NMT_VOCAB_H

enum { NMT_PAD = 0, NMT_UNK = 1, NMT_BOS = 2, NMT_EOS = 3 };

#endif

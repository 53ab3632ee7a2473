from textutils import count_sentences, count_words, reading_time, word_frequencies


def test_count_words():
    assert count_words("Hello, world!") == 2
    assert count_words("") == 0


def test_count_words_contractions():
    assert count_words("Don't panic, it's fine.") == 4


def test_word_frequencies_ignore_case():
    assert word_frequencies("The cat and the hat") == [("the", 2), ("cat", 1), ("and", 1), ("hat", 1)]


def test_word_frequencies_top():
    assert word_frequencies("a b a c a b", top=2) == [("a", 3), ("b", 2)]


def test_word_frequencies_contractions():
    assert word_frequencies("It's what it is", top=2) == [("it's", 1), ("what", 1)]


def test_count_sentences():
    assert count_sentences("One. Two! Three?") == 3
    assert count_sentences("No punctuation at the end") == 1
    assert count_sentences("   ") == 0


def test_count_sentences_ellipsis():
    assert count_sentences("Wait... what?") == 2


def test_reading_time():
    assert reading_time("word " * 231) == 2
    assert reading_time("") == 0

"""Offline grounding: the entity names a question mentions (base/retrieval/names.py)."""

import doctest

import pytest

import tracegraph.base.retrieval.names
from tracegraph.base.retrieval.names import question_names


@pytest.mark.parametrize("question, names", [
    # a disambiguating parenthetical stays with its name, whatever its case
    ("What is the record label of the performer of B Boy (Song)?", ["B Boy (Song)"]),
    ("Who produced B Boy (song) for the rapper's second album?", ["B Boy (song)"]),
    ("Hello (Lionel Richie song) was released by which label?", ["Hello (Lionel Richie song)"]),
    ("Where was the 'Midnight Harbor' (1996 film) shot?", ["Midnight Harbor (1996 film)"]),
    # quoted titles stay whole, lower-case words and apostrophes inside them too
    ("Which band recorded “The Man Who Sold the World” first?", ["The Man Who Sold the World"]),
    ('Who sang "Smells Like Teen Spirit" on the album Nevermind?', ["Smells Like Teen Spirit", "Nevermind"]),
    ("Who wrote 'Don't Stop Me Now' for Queen?", ["Don't Stop Me Now", "Queen"]),
    ("What is ‘a tale of two cities’ about?", ["a tale of two cities"]),
    # connectors inside a name: of, the, de, for, van, von
    ("Who was the first editor of Journal of Psychotherapy Integration?", ["Journal of Psychotherapy Integration"]),
    ("Which city is the University of the West of England in?", ["University of the West of England"]),
    ("When did Charles de Gaulle visit the Centre for Economic Policy Research?",
     ["Charles de Gaulle", "Centre for Economic Policy Research"]),
    ("Is Ludwig van Beethoven older than Carl Maria von Weber?", ["Ludwig van Beethoven", "Carl Maria von Weber"]),
    # a possessive ends the name before it
    ("Where did Hello Love's performer live when he died?", ["Hello Love"]),
    ("Who was Barack Obama's first chief of staff?", ["Barack Obama"]),
    ("What is Helios Grid's biggest dependency?", ["Helios Grid"]),
    # digits and ordinals belong to a name
    ("When did Apollo 11 land on the Moon?", ["Apollo 11", "Moon"]),
    ("Which studio released Windows 95 and Office 97?", ["Windows 95", "Office 97"]),
    ("Who directed the 20th Century Fox film Alien?", ["20th Century Fox", "Alien"]),
    # a name at the start of the question, with or without an article
    ("Helios Grid depends on which services?", ["Helios Grid"]),
    ("The Beatles signed with which label?", ["Beatles"]),
    ("Ledger Store is owned by whom?", ["Ledger Store"]),
    # question words and lone common words at a sentence start are not names
    ("Who founded the company that owns Instagram?", ["Instagram"]),
    ("Is Corvid Analytics part of Tarn Holdings?", ["Corvid Analytics", "Tarn Holdings"]),
    ("Name the river that flows through Leland, North Carolina.", ["Leland", "North Carolina"]),
    ("What's the capital of France?", ["France"]),
    ("Why is it slow?", []),
    # but a capitalised common word inside a sentence is a title
    ("Which album did The Who release in 1969?", ["Who"]),
    ("Who is Will Smith married to?", ["Will Smith"]),
    # two people compared are two names; one-word pairs with "and" or "&" are one
    ("Are Christopher Nolan and Sathish Kalathil both film directors?", ["Christopher Nolan", "Sathish Kalathil"]),
    ("Who founded Procter and Gamble?", ["Procter and Gamble"]),
    ("Who owns Marks & Spencer today?", ["Marks & Spencer"]),
    # abbreviations, hyphens, inner capitals, acronyms; dates are not names
    ("Which club did Chelsea F.C. sign him from?", ["Chelsea F.C."]),
    ("Where was Bashar al-Assad born?", ["Bashar al-Assad"]),
    ("When was the iPhone released in the US?", ["iPhone", "US"]),
    ("What happened in Paris in May 2010?", ["Paris"]),
    ("What is the capital of France.", ["France"]),
    # several sentences, each name once, in order
    ("Helios Grid calls Ledger Store. Which team owns Ledger Store?", ["Helios Grid", "Ledger Store"]),
])
def test_question_names(question, names):
    assert question_names(question) == names


def test_names_keep_the_question_spelling():
    [name] = question_names("Which label signed  B Boy  (Song)?")
    assert name == "B Boy  (Song)"  # cut from the question as written, not rebuilt from tokens


def test_doctests():
    result = doctest.testmod(tracegraph.base.retrieval.names)
    assert result.attempted > 0 and result.failed == 0

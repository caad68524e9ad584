"""``svmmap learn --auto``: its summary line, and the options it shares with SVMMapCV."""

import re

from svmmap.cli import main


def rows(n_queries, per_query):
    """LETOR lines of ``n_queries`` queries of ``per_query`` documents, two features, a third
    of them relevant: small enough to search in moments."""
    return "".join(
        f"{int(i % 3 == 0)} qid:{q} 1:{0.1 * i + 0.01 * q:.4f} 2:{(i * 7 % 5) / 5:.4f}\n"
        for q in range(n_queries)
        for i in range(per_query)
    )


def test_learn_auto_summary_accounts_for_every_candidate(tmp_path, capsys):
    """The summary's counts add up to the candidates searched: "searched 14 of 96 candidates
    ... 18 stopped early along C, 40 pruned by the race, 0 refused on this data, 0 left by the
    time budget" on MQ2008 fold 1 left out its 24 "no pairs" rows (a GA2M whose Binner kept no
    pair). With two features and no interaction planted, the GA2M rows keep no pair here."""
    train = tmp_path / "t.txt"
    train.write_text(rows(12, 6))
    assert main(["learn", "--auto", "--n-jobs", "1", "--cv", "2", str(train), str(tmp_path / "m.json")]) == 0
    err = capsys.readouterr().err
    summary = next(line for line in err.splitlines() if line.startswith("searched "))
    fitted, total = map(int, re.match(r"searched (\d+) of (\d+) candidates", summary).groups())
    rest = re.search(r"the rest: (.*?)\); best:", summary).group(1)
    counts = [int(n) for n in re.findall(r"(\d+) [a-z]", rest)]
    assert "without pairs" in rest
    assert fitted + sum(counts) == total, summary

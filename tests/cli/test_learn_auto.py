"""``svmmap learn --auto``: its summary line, and the options it shares with SVMMapCV."""

import re

import pytest
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


def test_learn_auto_takes_the_search_options_of_svmmapcv(tmp_path, capsys, monkeypatch):
    """--losses, --prune-margin and --max-train-queries are SVMMapCV's losses, prune_margin
    and max_train_queries ('none' for None): the command line had none of them."""
    from svmmap.model_selection import SVMMapCV

    searches = []
    original = SVMMapCV.fit

    def fit(self, *args, **kwargs):
        searches.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(SVMMapCV, "fit", fit)
    train = tmp_path / "t.txt"
    train.write_text(rows(12, 6))
    base = ["learn", "--auto", "--n-jobs", "1", "--cv", "2"]
    options = ["--losses", "map,pairwise", "--prune-margin", "none", "--max-train-queries", "3"]
    assert main([*base, *options, str(train), str(tmp_path / "a.json")]) == 0
    search = searches[-1]
    assert search.losses == ["map", "pairwise"]
    assert search.prune_margin is None and search.max_train_queries == 3
    assert {p["loss"] for p in search.cv_results_["params"]} == {"map", "pairwise"}
    # The 6 training queries of each split, cut to 3.
    assert set(search.cv_results_["split0_train_queries"]) <= {0, 3}
    assert main([*base, "--prune-margin", "0.05", str(train), str(tmp_path / "b.json")]) == 0
    assert searches[-1].prune_margin == 0.05 and searches[-1].max_train_queries == 500
    capsys.readouterr()


@pytest.mark.parametrize(
    "options, complaint",
    [
        # The checks are SVMMapCV's own, naming the options as typed.
        (["--auto", "--prune-margin", "-1"], "--prune-margin must be a finite number >= 0 or None, got -1"),
        (["--auto", "--prune-margin", "nan"], "--prune-margin must be a finite number >= 0 or None, got nan"),
        (["--auto", "--prune-margin", "x"], "--prune-margin must be a finite number >= 0 or None, got 'x'"),
        (["--auto", "--max-train-queries", "0"], "--max-train-queries must be an integer >= 1 or None, got 0"),
        (["--auto", "--max-train-queries", "2.5"], "--max-train-queries must be an integer >= 1 or None, got 2.5"),
        (["--auto", "--losses", "map,map"], "--losses lists one loss twice: 'map' and 'map' train the same model"),
        (["--prune-margin", "0.1"], "--prune-margin is read by --auto only"),
        (["--max-train-queries", "5"], "--max-train-queries is read by --auto only"),
        (["--losses", "map"], "--losses is read by --auto only"),
    ],
)
def test_learn_auto_checks_its_search_options_as_python_does(tmp_path, capsys, options, complaint):
    train = tmp_path / "t.txt"
    train.write_text(rows(6, 4))
    model = tmp_path / "m.json"
    assert main(["learn", *options, str(train), str(model)]) == 2
    assert complaint in capsys.readouterr().err
    assert not model.exists()


def test_an_unknown_loss_of_the_list_is_named_by_its_place(tmp_path, capsys):
    """SVMMapCV(losses=["map", "bogus"]) said "loss must be one of ..., got 'bogus'", naming
    loss, which the user left at "auto"; --losses said the same. Both name the list's item."""
    import numpy as np
    from svmmap import SVMMapCV

    with pytest.raises(ValueError, match=r"^losses\[1\] must be one of map, "):
        SVMMapCV(loss="auto", losses=["map", "bogus"]).fit(np.eye(4), [1, 0, 1, 0], qid=[1, 1, 2, 2])
    train = tmp_path / "t.txt"
    train.write_text(rows(6, 4))
    assert main(["learn", "--auto", "--losses", "map,bogus", str(train), str(tmp_path / "m.json")]) == 2
    assert "--losses[1] must be one of map, " in capsys.readouterr().err

import pytest


@pytest.fixture
def one_line(capsys):
    """``one_line(*needles)``: stderr held one line (a refusal) containing every needle."""
    def check(*needles):
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1, err
        for needle in needles:
            assert needle in err, err
        assert len(err) < 300, err
        return err
    return check

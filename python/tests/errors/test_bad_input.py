"""A scenario serve rejects (exit 2, an unknown key) fails the test that
asked for it, with serve's own diagnostic: .ci/dist.sh requires exit 1 and
the did-you-mean."""


def test_misspelt_key(retrylab_scenario):
    retrylab_scenario({"provider": "openai", "atempts": [{"status": 503}]})

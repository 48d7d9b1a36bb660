"""LiteLLM (pinned in ../litellm/requirements.txt), unchanged, as a retrylab
external client, in the ways applications use it:

  python litellm_client.py completion   litellm.completion(..., num_retries=N)
  python litellm_client.py router       litellm.Router(num_retries=N).completion
  python litellm_client.py fallback     the same Router with a second deployment as its fallback
                                        (fallbacks=[{"chat": ["backup"]}], model FALLBACK_MODEL)

Its model is pointed at the mock through api_base, from the variable the
harness sets for the scenario's provider (OPENAI_BASE_URL for provider
openai, ANTHROPIC_BASE_URL for anthropic). LITELLM_NUM_RETRIES sets
num_retries (default: LiteLLM's own default, left unset),
LITELLM_DEPLOYMENT_MAX_RETRIES a Router deployment's own max_retries (the
OpenAI/Anthropic SDK's retries under the Router's); CLIENT_STREAM=0
asks for a whole answer. LITELLM_LOCAL_MODEL_COST_MAP keeps LiteLLM from
fetching its model map from the internet; telemetry is off.
See docs/sdk-clients.md, "LiteLLM".
"""

import sys

sys.dont_write_bytecode = True  # nothing written beside the client: the run folder is the harness's


import os
import sys

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402

from common import IncompleteStreamError, run, stream_mode  # noqa: E402

litellm.telemetry = False
litellm.suppress_debug_info = True

mode = sys.argv[1] if len(sys.argv) > 1 else "completion"
if mode not in ("completion", "router", "fallback"):
    print(f"usage: python litellm_client.py [completion|router|fallback] (got {mode!r})", file=sys.stderr)
    sys.exit(2)

if os.environ.get("ANTHROPIC_BASE_URL") and not os.environ.get("OPENAI_BASE_URL"):
    model = "anthropic/" + (os.environ.get("RETRYLAB_MODEL") or "claude-sonnet-4-5")
    api_base = os.environ["ANTHROPIC_BASE_URL"]
    api_key = os.environ.get("ANTHROPIC_API_KEY", "")
else:
    model = "openai/" + (os.environ.get("RETRYLAB_MODEL") or "gpt-4o-mini")
    api_base = os.environ.get("OPENAI_BASE_URL", "")
    api_key = os.environ.get("OPENAI_API_KEY", "")

kw = {}
retries = os.environ.get("LITELLM_NUM_RETRIES")
if retries is not None:
    kw["num_retries"] = int(retries)
messages = [{"role": "user", "content": "Say hello."}]

if mode in ("router", "fallback"):
    params = {"model": model, "api_base": api_base, "api_key": api_key}
    if os.environ.get("LITELLM_DEPLOYMENT_MAX_RETRIES") is not None:
        # The deployment's own max_retries: the SDK's retries under the
        # Router's (the nested layers that multiply attempts).
        params["max_retries"] = int(os.environ["LITELLM_DEPLOYMENT_MAX_RETRIES"])
    deployments = [{"model_name": "chat", "litellm_params": params}]
    if mode == "fallback":
        backup = model.split("/")[0] + "/" + (os.environ.get("FALLBACK_MODEL") or "fallback-model")
        deployments.append({"model_name": "backup", "litellm_params": {**params, "model": backup}})
        kw["fallbacks"] = [{"chat": ["backup"]}]
    router = litellm.Router(model_list=deployments, **kw)
    call = lambda **a: router.completion(model="chat", **a)  # noqa: E731
else:
    call = lambda **a: litellm.completion(model=model, api_base=api_base, api_key=api_key, **kw, **a)  # noqa: E731


def one(_):
    if not stream_mode():
        r = call(messages=messages, max_tokens=64)
        c = r.choices[0]
        return f"{len(c.message.content or '')} characters, finish_reason {c.finish_reason}"
    text, finish = "", None
    for chunk in call(messages=messages, max_tokens=64, stream=True):
        for c in chunk.choices:
            text += (c.delta.content or "") if c.delta else ""
            finish = c.finish_reason or finish
    if not finish:
        raise IncompleteStreamError(f"stream ended without finish_reason after {len(text)} characters")
    return f"{len(text)} characters, finish_reason {finish}"


run(f"litellm {mode}", one)

"""The checker as a reward inside TRL itself: GRPOTrainer's reward path on a handful of completions, beside
`roomspace score` on the same answers (`make test-vlm-harness`, issue 32).

    .venv-vlm/bin/python bench/grpo_reward.py BUILD [--config n5_m4_d144] [--shown 12] [--out out/vlm-harness/grpo]

Run with the Python of .venv-vlm (TRL, torch). No download: the policy is a tiny randomly initialised
Llama (one layer, hidden size 32) and its tokenizer a byte-level BPE trained here on the prompts.

1. `roomspace export BUILD --split test --format prompt --config C` writes the prompt-only dataset
   the reward pairs with (every question of C).
2. GRPOTrainer is made with reward_funcs=[roomspace_reward, roomspace_exact_reward]; its own reward
   step (`_calculate_rewards`, what `_generate_and_score_completions` calls) scores three completions
   per question, a right answer, a partly right or wrong one and an unparseable one, with the dataset's
   columns passed as TRL passes them; the first `--shown` are printed one by one.
3. Each completion slot is a predictions file (right, partial, unparseable) that `roomspace score`
   scores; per slot and question type the mean exact reward must be score's YN accuracy or FR exact
   match, and the mean partial reward score's FR Jaccard.
4. One real training step (trainer.train(), max_steps 1) runs the rewards on the tiny model's own
   sampled completions (random tokens: they earn 0, as unparseable answers do).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.cli import main as roomspace  # noqa: E402
from pipeline.errors import RoomspaceError  # noqa: E402
from pipeline.evaluate.reward import roomspace_exact_reward, roomspace_reward  # noqa: E402

SLOTS = ("right", "partial", "unparseable")
TOLERANCE = 1e-6  # rewards pass through float32 tensors
CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def completions_for(row: dict) -> dict[str, str]:
    """A right, a partly right (FR: one right relation and a wrong one; YN: the wrong answer) and an
    unparseable answer to a question."""
    if row["question_type"] == "YN":
        wrong = "No" if row["answer"] == "Yes" else "Yes"
        return {"right": f"Answer: {row['answer']}", "partial": f"Answer: {wrong}", "unparseable": "Answer: maybe"}
    named = row["answer"].split(", ")
    outside = next((o for o in row["options"] if o not in named), None)
    partial = ", ".join([named[0], outside] if outside else named[:1])
    return {"right": f"Answer: {row['answer']}", "partial": f"Answer: {partial}", "unparseable": "Answer: nowhere"}


def exported(source: str, config: str) -> list[dict]:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = roomspace(["export", source, "--split", "test", "--format", "prompt", "--config", config])
    if status:
        raise RoomspaceError(f"roomspace export failed (exit {status})")
    return [json.loads(line) for line in printed.getvalue().splitlines()]


def tiny_policy(texts: list[str]):
    """A randomly initialised one-layer Llama and a byte-level BPE tokenizer trained on `texts`."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    torch.manual_seed(0)
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=2000, special_tokens=["<unk>", "<pad>", "<eos>"],
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, unk_token="<unk>", pad_token="<pad>", eos_token="<eos>")
    tokenizer.chat_template = CHAT_TEMPLATE
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=16384,
                         pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    return LlamaForCausalLM(config), tokenizer


def score_slots(source: str, config: str, rows: list[dict], out: Path) -> dict[str, dict]:
    """`roomspace score` of each slot's answers: {slot: {yn_accuracy, fr_exact, fr_jaccard}}."""
    files = []
    for slot in SLOTS:
        path = out / f"{slot}.jsonl"
        path.write_text("".join(json.dumps({"id": row["id"], "prediction": completions_for(row)[slot]}) + "\n"
                                for row in rows), encoding="utf-8")
        files.append(str(path))
    report = out / "score.json"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = roomspace(["score", source, "--config", config, *(f for path in files for f in ("--predictions", path)), "--json", str(report)])
    (out / "score.md").write_text(printed.getvalue(), encoding="utf-8")
    if status:
        raise RoomspaceError(f"roomspace score failed (exit {status})")
    (group,) = json.loads(report.read_text(encoding="utf-8"))["groups"]
    return {slot: {"yn_accuracy": m["yn_accuracy"]["value"], "fr_exact": m["fr_exact"]["value"],
                   "fr_jaccard": m["fr_jaccard"]} for slot, m in group["overall"]["systems"].items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="a build (make test-vlm-harness's)")
    parser.add_argument("--config", default="n5_m4_d144", help="a text configuration of the build")
    parser.add_argument("--shown", type=int, default=12, help="completions printed one by one (default 12)")
    parser.add_argument("--out", type=Path, default=Path("out/vlm-harness/grpo"))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    source = str(Path(args.source).resolve())

    import datasets
    import torch
    import trl
    from trl import GRPOConfig, GRPOTrainer

    rows = exported(source, args.config)
    dataset = datasets.Dataset.from_list(rows[:3])  # what the training step samples from
    model, tokenizer = tiny_policy([row["prompt"][0]["content"] for row in rows])
    config = GRPOConfig(output_dir=str(args.out / "trainer"), per_device_train_batch_size=3, num_generations=3,
                        max_completion_length=8, max_steps=1, learning_rate=1e-4, logging_steps=1, report_to=[],
                        save_strategy="no", use_cpu=True, bf16=False, seed=0, dataloader_num_workers=0)
    trainer = GRPOTrainer(model=model, reward_funcs=[roomspace_reward, roomspace_exact_reward], args=config,
                          train_dataset=dataset, processing_class=tokenizer)

    # GRPO's reward step on chosen completions: each question repeated for its group, columns alongside
    inputs = [row for row in rows for _ in SLOTS]
    texts = [completions_for(row)[slot] for row in rows for slot in SLOTS]
    completions = [[{"role": "assistant", "content": text}] for text in texts]
    ids = [tokenizer(text, add_special_tokens=False)["input_ids"] for text in texts]
    with torch.no_grad():
        rewards = trainer._calculate_rewards(inputs, [row["prompt"] for row in inputs], completions, ids).cpu()
    partial, exact = rewards[:, 0].tolist(), rewards[:, 1].tolist()

    scored = score_slots(source, args.config, rows, args.out)
    lines = ["| question | type | completion | roomspace_reward | roomspace_exact_reward |", "|---|---|---|---:|---:|"]
    lines += [f"| {row['id']} | {row['question_type']} | {text!r} | {p:.4f} | {e:.0f} |"
              for row, text, p, e in list(zip(inputs, texts, partial, exact))[:args.shown]]
    lines += [f"| ... {len(texts) - args.shown} more | | | | |" if len(texts) > args.shown else "",
              "", f"Every question of {args.config} ({len(rows)}), three completions each:", "",
              "| completions | measure | mean reward (TRL) | roomspace score |", "|---|---|---:|---:|"]
    problems = []
    for k, slot in enumerate(SLOTS):
        chosen = [j for j in range(len(inputs)) if j % len(SLOTS) == k]
        for question_type, measure, values in (("YN", "yn_accuracy", exact), ("FR", "fr_exact", exact),
                                               ("FR", "fr_jaccard", partial)):
            mine = [values[j] for j in chosen if inputs[j]["question_type"] == question_type]
            mean, ours = sum(mine) / len(mine), scored[slot][measure]
            lines.append(f"| {slot} | {measure} | {mean:.4f} | {ours:.4f} |")
            if abs(mean - ours) > TOLERANCE:
                problems.append(f"{slot} {measure}: TRL's mean reward {mean!r}, roomspace score {ours!r}")
    for row, p, e in zip(inputs, partial, exact):  # a YN answer has no partial credit
        if row["question_type"] == "YN" and p != e:
            problems.append(f"{row['id']}: YN partial reward {p} differs from the exact one {e}")

    trainer.train()  # one real step: the tiny policy samples, TRL calls the rewards
    logged = {key: value for entry in trainer.state.log_history for key, value in entry.items() if "reward" in key}
    if "rewards/roomspace_reward/mean" not in logged:
        problems.append(f"the training step logged no roomspace_reward: {sorted(logged)}")
    lines += ["", f"One training step (TRL {trl.__version__}, torch {torch.__version__}, a {sum(p.numel() for p in model.parameters())}"
              f"-parameter random Llama): " + ", ".join(f"{key} = {value:.4f}" for key, value in sorted(logged.items())
                                                        if key.endswith("/mean"))]
    report = "\n".join(lines) + "\n\n" + ("every mean equal." if not problems else "DIFFERENT:\n" + "\n".join(problems))
    (args.out / "report.md").write_text(report + "\n", encoding="utf-8")
    print(report)
    return 1 if problems else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RoomspaceError as error:
        sys.exit(f"error: {error}")

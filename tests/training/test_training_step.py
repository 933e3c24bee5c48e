"""A batch of prepare's Parquet trains a tiny random gpt-oss-shaped model, loss on the mask only.

TRL's SFTTrainer reads the Parquet as a pre-tokenized dataset (``input_ids`` and ``labels``
columns); without TRL a plain transformers loop takes the same batch. Either way the test
checks that the loss is the cross-entropy over the masked-in tokens alone, computed here from
the ``assistant_masks`` column, and that one optimiser step changes the weights.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harmony_grammar.training import PrepareOptions, prepare

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
datasets = pytest.importorskip("datasets")
pytest.importorskip("pyarrow")

from harmony_grammar.generation.hf import tiny_gpt_oss  # noqa: E402

RECORDS = [
    {
        "messages": [
            {"role": "user", "content": f"What is {i} + {i}?"},
            {"role": "assistant", "thinking": f"Add {i} to itself.", "content": str(2 * i)},
        ]
    }
    for i in range(1)
] + [
    {
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "tool_calls": [{"function": {"name": "weather", "arguments": {"city": "Paris"}}}],
            },
            {"role": "tool", "content": "sunny"},
            {"role": "assistant", "content": "Sunny."},
        ],
        "tools": [{"name": "weather", "description": "Weather.", "parameters": {"type": "object"}}],
    }
]


PAD, PAD_ID = "<|endoftext|>", 199999


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("train")
    source = folder / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    report = prepare(str(source), str(folder / "train.parquet"), PrepareOptions(train_on="all"))
    assert report.written == len(RECORDS) and not report.problems
    return folder / "train.parquet"


def _pad_only_tokenizer() -> Any:
    """The dataset is pre-tokenized: TRL uses its processing class only for the pad id, so a
    one-word tokenizer stands in for the real one (which takes seconds to build)."""
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.WordLevel({"<unk>": 0, PAD: PAD_ID}, unk_token="<unk>"))
    return PreTrainedTokenizerFast(tokenizer_object=backend, pad_token=PAD, eos_token=PAD)


def _masked_loss(model: Any, input_ids: Any, masks: Any, attention: Any) -> Any:
    """Mean next-token cross-entropy over the positions whose target is masked in."""
    with torch.no_grad():
        logits = model(input_ids=input_ids, attention_mask=attention).logits.float()
    targets = input_ids[:, 1:]
    chosen = masks[:, 1:].bool()
    losses = torch.nn.functional.cross_entropy(
        logits[:, :-1].reshape(-1, logits.size(-1)), targets.reshape(-1), reduction="none"
    ).view(targets.shape)
    return losses[chosen].mean(), losses[attention[:, 1:].bool()].mean()


def _padded(rows: list[list[int]], value: int) -> Any:
    width = max(map(len, rows))
    return torch.tensor([row + [value] * (width - len(row)) for row in rows])


def test_one_step_on_the_exported_parquet_trains_on_the_mask_only(
    prepared: Path, tmp_path: Path
) -> None:
    dataset = datasets.Dataset.from_parquet(str(prepared))
    batch = dataset.select(range(2))
    input_ids = _padded(batch["input_ids"], PAD_ID)
    masks = _padded(batch["assistant_masks"], 0)
    attention = _padded([[1] * len(r) for r in batch["input_ids"]], 0)
    model = tiny_gpt_oss()  # the gateway's default model too (generation/hf.py)
    expected, everything = _masked_loss(model, input_ids, masks, attention)
    assert not torch.isclose(expected, everything)  # the mask changes what is learned
    before = [p.detach().clone() for p in model.parameters()]

    try:
        import trl
    except ImportError:
        trl = None
    if trl is not None:
        config = trl.SFTConfig(
            output_dir=str(tmp_path / "out"),
            max_steps=1,
            per_device_train_batch_size=2,
            learning_rate=1e-2,
            max_length=None,
            logging_steps=1,
            save_strategy="no",
            report_to=[],
            use_cpu=True,
            dataloader_num_workers=0,
            shuffle_dataset=False,
        )
        trainer = trl.SFTTrainer(
            model=model, args=config, train_dataset=batch, processing_class=_pad_only_tokenizer()
        )
        loader_batch = next(iter(trainer.get_train_dataloader()))
        labels = loader_batch["labels"]
        # TRL took the labels column as is: -100 on every token outside the mask and the
        # padding. Its sampler shuffles, so rows are matched by their ids.
        for ids, row_labels in zip(loader_batch["input_ids"], labels):
            (i,) = [i for i in range(len(input_ids)) if torch.equal(input_ids[i], ids)]
            assert torch.equal(row_labels == -100, ~masks[i].bool() | ~attention[i].bool())
        result = trainer.train()
        loss = torch.tensor(result.training_loss)
    else:  # pragma: no cover - TRL absent: the same batch through a plain loop
        labels = _padded(batch["labels"], -100)
        optimiser = torch.optim.SGD(model.parameters(), lr=1e-2)
        model.train()
        output = model(input_ids=input_ids, attention_mask=attention, labels=labels)
        output.loss.backward()
        optimiser.step()
        loss = output.loss.detach()
    assert torch.isclose(loss.float(), expected, rtol=1e-3), (loss, expected)
    assert any(not torch.equal(a, b.detach()) for a, b in zip(before, model.parameters()))

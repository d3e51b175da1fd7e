"""Model definition and training loop."""
import torch
from torch import nn

from legacy_project.compile_utils import compile_model
from legacy_project.linalg_utils import orthogonal_init_, whiten
from legacy_project.losses import LossConfig, build_loss
from legacy_project.profiling import region


class TinyClassifier(nn.Module):
    def __init__(self, in_features: int, hidden: int, n_classes: int):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_features, hidden), nn.GELU())
        self.head = nn.Linear(hidden, n_classes, bias=False)
        orthogonal_init_(self.body[0].weight)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def make_data(n: int = 512, d: int = 16, k: int = 4):
    x = torch.randn(n, d) @ torch.randn(d, d)
    y = torch.randint(0, k, (n,))
    return x, y


def train(epochs: int = 3, batch_size: int = 64, compile: bool = False) -> TinyClassifier:
    x, y = make_data()
    # Whiten inputs once up front (older revisions did this with torch.cholesky inline).
    cov = torch.cov(x.T) + 1e-3 * torch.eye(x.shape[1])
    x = whiten(x - x.mean(0), cov)

    model = TinyClassifier(x.shape[1], 32, int(y.max()) + 1)
    body = compile_model(model.body) if compile else model.body
    loss_fn = build_loss(LossConfig())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    for epoch in range(epochs):
        perm = torch.randperm(x.shape[0])
        total = 0.0
        for i in range(0, x.shape[0], batch_size):
            idx = perm[i : i + batch_size]
            with region("step"):
                hidden = body(x[idx])
                loss = loss_fn(hidden, model.head.weight, y[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
            total += loss.item() * len(idx)
        print(f"epoch {epoch}: loss {total / x.shape[0]:.4f}")
    return model


if __name__ == "__main__":
    train()

"""Training and export helpers, first written for torch 2.0 and kept running since."""

import argparse
import functools

import functorch
import torch
import torch.utils.dlpack
import torch.nn.functional as F
from torch._six import inf
from torch.ao.quantization import convert, get_default_qconfig, prepare
from torch.cuda.amp import GradScaler, autocast
from torch.distributed._tensor import DTensor, Shard
from torch.distributed._tensor.redistribute import Redistribute
from torch.utils import _pytree as pytree
from torch.utils.checkpoint import checkpoint


class Batch:
    def __init__(self, inputs, targets):
        self.inputs, self.targets = inputs, targets


pytree._register_pytree_node(Batch, lambda b: ([b.inputs, b.targets], None), lambda xs, _: Batch(*xs))


def load_checkpoint(path):
    state = torch.load(path, map_location="cpu")
    return state["model"], argparse.Namespace(**state["args"])


def build(model, lr):
    torch.set_default_tensor_type(torch.FloatTensor)
    head = torch.nn.utils.weight_norm(torch.nn.Linear(16, 4))
    torch.nn.init.xavier_uniform(head.weight)
    head.bias.require_grad = False  # meant to freeze the bias: a typo, nothing changes
    optimizer = torch.optim.SGD(list(model.parameters()) + list(head.parameters()), lr=lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, verbose=False)
    return head, optimizer, scheduler


def train_step(model, head, batch, optimizer, scaler: GradScaler):
    optimizer.zero_grad(set_to_none=False)
    with autocast(dtype=torch.get_autocast_gpu_dtype()):
        with torch.backends.cuda.sdp_kernel(enable_flash=False):
            features = checkpoint(model, batch.inputs)
        loss = F.cross_entropy(head(features), batch.targets)
    scaler.scale(loss).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=inf)
    scaler.step(optimizer)
    scaler.update()
    return loss


def device_for_training():
    return "cuda" if torch.has_cuda and torch.cuda.is_available() else "cpu"


def flash_attention_ok(q, k, v):
    params = torch.backends.cuda.SDPAParams(q, k, v, None, 0.0, True)
    return torch.backends.cuda.can_use_flash_attention(params)


def force_math_attention():
    torch.nn.attention.enable_flash_sdp(False)
    torch.nn.attention.enable_mem_efficient_sdp(False)


def check_gradients(fn, inputs):
    return torch.autograd.gradcheck(fn, inputs, check_sparse_nnz=False)


def shard(model):
    frozen = list(model.embeddings.parameters())
    return torch.distributed.fsdp.FullyShardedDataParallel(model, ignored_parameters=frozen)


def elastic_spec(handler, entrypoint):
    from torch.distributed.elastic.agent.server.api import WorkerSpec
    from torch.distributed.elastic.multiprocessing import Std

    return WorkerSpec(role="trainer", local_world_size=2, rdzv_handler=handler, entrypoint=entrypoint,
                      redirects=Std.ALL)


def memory_report():
    reserved = torch.cuda.memory_cached()
    torch.cuda.reset_max_memory_allocated()
    return reserved


def sync_replicas(tensors):
    torch.distributed.all_reduce_multigpu(tensors)


def upscale(images):
    return F.upsample(images, scale_factor=2, mode="nearest")


def per_sample_grads(loss_fn, params, batch):
    return functorch.vmap(functorch.grad(loss_fn), in_dims=(None, 0))(params, batch)


def solve_normal_equations(a, b):
    gram = torch.chain_matmul(a.mT, a, torch.eye(a.shape[-1])) + 1e-3 * torch.ger(a[0], a[0])
    lu, pivots = torch.lu(gram)
    x = torch.lu_solve(a.mT @ b, lu, pivots)
    upper = torch.triu(gram)
    check, _ = torch.triangular_solve(a.mT @ b, upper)
    torch.testing.assert_allclose(x, check, rtol=1e-3, atol=1e-3)
    return x, torch.range(0, x.shape[0] - 1)


def is_sharded(t):
    return isinstance(t, DTensor) and any(isinstance(p, Shard) for p in t.placements)


def reshard(t, mesh, placements):
    return Redistribute.apply(t, mesh, placements)


def quantize_for_serving(model, calibration_batches):
    model.qconfig = get_default_qconfig("x86")
    prepared = prepare(model.eval())
    for batch in calibration_batches:
        prepared(batch)
    return convert(prepared)


def init_distributed(rank, world_size):
    torch.distributed.init_process_group("nccl", rank=rank, world_size=world_size)


def wrap_for_ddp(model, rank):
    return torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank], broadcast_buffers=True)


def sync_shards(out, shard, grads, grad_shard):
    torch.distributed.all_gather_into_tensor(out, shard)
    torch.distributed.reduce_scatter_tensor(grad_shard, grads)


def export(model, example, path):
    torch.onnx.export(model, (example,), path, input_names=["x"])


def export_debug_text(model, example):
    # Printed in the export test's log when the ONNX graph changes.
    return torch.onnx.export_to_pretty_string(model, (example,), None)


def export_dynamic(model, example, path):
    torch.onnx.dynamo_export(model, example).save(path)


def export_for_finetuning(model, example):
    return torch.export.export_for_training(model, (example,))


def is_gpu_capsule(device_type):
    return device_type == torch.utils.dlpack.DLDeviceType.kDLGPU


def export_with_weights(model, example, path):
    # torch 2.0's exporter took its options by position.
    torch.onnx.export(model, (example,), path, True, False)


checkpoint_all = functools.partial(torch.load, map_location="cpu")


def pretrained_detector():
    return torch.hub.load("ultralytics/yolov5", "yolov5s")


class LongestFirst(torch.utils.data.Sampler):
    """Indices by decreasing length: padding stays small in the first batches."""

    def __init__(self, lengths):
        super().__init__(lengths)
        self.lengths = lengths

    def __iter__(self):
        return iter(sorted(range(len(self.lengths)), key=lambda i: -self.lengths[i]))

    def __len__(self):
        return len(self.lengths)


def batches(dataset, batch_size=32):
    """A loader without worker processes: TU703 (a hint, `--select TU703`)."""
    return torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=True)


def stack(samples):
    """The default collate function through its private module: TU705 (a hint, `--select TU705`)."""
    return torch.utils.data._utils.collate.default_collate(samples)

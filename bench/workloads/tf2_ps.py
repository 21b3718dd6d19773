"""TensorFlow 2 ParameterServerStrategy training: a coordinator (chief), workers
and parameter servers, as a TFJob runs it (TF_CONFIG from the operator).

The model is a click-through-rate toy: one large embedding table and small
dense layers. With `--partitioner none` TF places whole variables round-robin
over the PS in creation order, so the embedding (and nearly all traffic: the
looked-up rows and their gradients) lands on one PS: the hot parameter server
of the field story. `min_size` (MinSizePartitioner, max_shards = number of
PS) or `fixed` (FixedShardsPartitioner) split it: the fix.

Deterministic: stateless random ids and initial values from fixed seeds.
The chief writes the completed steps to $TRAINSIM_STEPS_FILE.
"""
import argparse
import json
import os
import sys

from steps import Deadline, StepCounter, limit_threads

limit_threads()
import tensorflow as tf  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--partitioner", choices=["none", "min_size", "fixed"], default="none")
    p.add_argument("--vocab", type=int, default=50000)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--ids", type=int, default=8, help="ids looked up per example")
    p.add_argument("--step-ms", type=int, default=200, help="minimum time per round of steps")
    p.add_argument("--max-seconds", type=float, default=600)
    return p.parse_args()


def server_config():
    c = tf.compat.v1.ConfigProto()
    c.intra_op_parallelism_threads = 1
    # Not 1: a remote function waiting for a tensor from another task
    # holds its inter-op thread, and a single one deadlocks the task.
    c.inter_op_parallelism_threads = 2
    return c


def run_server(resolver):
    """PS and workers only serve: the coordinator drives them."""
    server = tf.distribute.Server(
        resolver.cluster_spec(), job_name=resolver.task_type,
        task_index=resolver.task_id, protocol="grpc", config=server_config())
    print(f"[tf2_ps] {resolver.task_type} {resolver.task_id} serving", flush=True)
    server.join()


def partitioner(kind, num_ps):
    parts = tf.distribute.experimental.partitioners
    if kind == "min_size":
        return parts.MinSizePartitioner(min_shard_bytes=256 << 10, max_shards=num_ps)
    if kind == "fixed":
        return parts.FixedShardsPartitioner(num_shards=num_ps)
    return None


def shards(v):
    return list(v.variables) if hasattr(v, "variables") and not isinstance(v, tf.Variable) else [v]


def run_coordinator(resolver, args):
    num_ps = len(resolver.cluster_spec().as_dict().get("ps", []))
    num_workers = len(resolver.cluster_spec().as_dict().get("worker", []))
    strategy = tf.distribute.experimental.ParameterServerStrategy(
        resolver, variable_partitioner=partitioner(args.partitioner, num_ps))
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    hidden = 32
    with strategy.scope():
        # Creation order decides default placement: the embedding first.
        emb = tf.Variable(tf.random.stateless_uniform([args.vocab, args.dim], seed=[1, 2],
                                                      minval=-0.05, maxval=0.05), name="embedding")
        w1 = tf.Variable(tf.random.stateless_normal([args.dim, hidden], seed=[3, 4], stddev=0.1), name="dense_w1")
        b1 = tf.Variable(tf.zeros([hidden]), name="dense_b1")
        w2 = tf.Variable(tf.random.stateless_normal([hidden, 1], seed=[5, 6], stddev=0.1), name="dense_w2")
        b2 = tf.Variable(tf.zeros([1]), name="dense_b2")
    for v in (emb, w1, b1, w2, b2):
        print(f"[tf2_ps] {v.name}: " + ", ".join(f"{s.device} {s.shape}" for s in shards(v)), flush=True)
    # With a partitioner every variable may be a ShardedVariable (a
    # FixedShardsPartitioner splits even the biases): train its shards.
    dense = [s for v in (w1, b1, w2, b2) for s in shards(v)]
    lr = 0.05

    @tf.function
    def step(seed):
        ids = tf.random.stateless_uniform([args.batch, args.ids], seed=tf.stack([seed, 7]),
                                          maxval=args.vocab, dtype=tf.int64)
        labels = tf.cast(tf.reduce_sum(ids % 2, axis=1, keepdims=True) > args.ids // 2, tf.float32)
        emb_vars = shards(emb)
        with tf.GradientTape() as tape:
            x = tf.reduce_mean(tf.nn.embedding_lookup(emb, ids), axis=1)
            h = tf.nn.relu(x @ w1 + b1)
            loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels, h @ w2 + b2))
        grads = tape.gradient(loss, emb_vars + dense)
        for v, g in zip(emb_vars + dense, grads):
            if g is None:
                continue
            if isinstance(g, tf.IndexedSlices):
                v.scatter_sub(tf.IndexedSlices(lr * g.values, g.indices))
            else:
                v.assign_sub(lr * g)
        return loss

    counter = StepCounter()
    deadline = Deadline(args.max_seconds)
    seed = 0
    import time
    while not deadline.over():
        started = time.monotonic()
        results = []
        for _ in range(num_workers):
            seed += 1
            results.append(coordinator.schedule(step, args=(tf.constant(seed, tf.int64),)))
        coordinator.join()
        counter.add(len(results))
        if seed % (num_workers * 50) == 0:
            print(f"[tf2_ps] steps {counter.steps} loss {results[-1].fetch():.4f}", flush=True)
        deadline.pace(started, args.step_ms / 1000)
    counter.write(force=True)
    print(f"[tf2_ps] done after {counter.steps} steps", flush=True)


def main():
    args = parse_args()
    if "TF_CONFIG" not in os.environ:
        sys.exit("tf2_ps: TF_CONFIG is not set (run it as a TFJob / trainsim job with chief, ps, workers)")
    task = json.loads(os.environ["TF_CONFIG"])["task"]
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    if task["type"] in ("ps", "worker"):
        StepCounter()  # 0: the coordinator counts this job's steps
        run_server(resolver)
    elif task["type"] == "chief":
        run_coordinator(resolver, args)
    else:
        sys.exit(f"tf2_ps: unsupported task type {task['type']!r}")


if __name__ == "__main__":
    main()

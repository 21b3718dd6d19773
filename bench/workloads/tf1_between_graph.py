"""TensorFlow 1-style between-graph replication through tf.compat.v1, the
exact style of the field story: every task is a tf.compat.v1.train.Server
started from --job_name/--task_index/--ps_hosts/--worker_hosts flags, PS
tasks join, each worker builds its own graph under
replica_device_setter, which places variables round-robin over the PS in
creation order (global_step, then the embedding, then the dense layers), so
the one large embedding and nearly all traffic land on one PS.
`--partition N` splits the embedding with fixed_size_partitioner (the fix).

Deterministic: graph-level seeds per task. Every worker writes its
completed steps to $TRAINSIM_STEPS_FILE.
"""
import argparse
import sys
import time

from steps import Deadline, StepCounter, limit_threads

limit_threads()
import tensorflow as tf  # noqa: E402

v1 = tf.compat.v1


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--job_name", required=True, choices=["ps", "worker"])
    p.add_argument("--task_index", type=int, required=True)
    p.add_argument("--ps_hosts", required=True, help="comma-separated host:port")
    p.add_argument("--worker_hosts", required=True, help="comma-separated host:port")
    p.add_argument("--partition", type=int, default=0, help="embedding shards (0: none)")
    p.add_argument("--vocab", type=int, default=50000)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--ids", type=int, default=8)
    p.add_argument("--step-ms", type=int, default=200)
    p.add_argument("--max-seconds", type=float, default=600)
    return p.parse_args()


def session_config():
    c = v1.ConfigProto()
    c.intra_op_parallelism_threads = 1
    # Not 1: a remote function waiting for a tensor from another task
    # holds its inter-op thread, and a single one deadlocks the task.
    c.inter_op_parallelism_threads = 2
    return c


def build_graph(args, cluster):
    device = v1.train.replica_device_setter(
        worker_device=f"/job:worker/task:{args.task_index}", cluster=cluster)
    with v1.device(device):
        global_step = v1.train.get_or_create_global_step()
        partitioner = (v1.fixed_size_partitioner(args.partition)
                       if args.partition > 0 else None)
        emb = v1.get_variable("embedding", [args.vocab, args.dim],
                              initializer=v1.random_uniform_initializer(-0.05, 0.05, seed=1),
                              partitioner=partitioner)
        w1 = v1.get_variable("dense/w1", [args.dim, 32],
                             initializer=v1.truncated_normal_initializer(stddev=0.1, seed=2))
        b1 = v1.get_variable("dense/b1", [32], initializer=v1.zeros_initializer())
        w2 = v1.get_variable("dense/w2", [32, 1],
                             initializer=v1.truncated_normal_initializer(stddev=0.1, seed=3))
        b2 = v1.get_variable("dense/b2", [1], initializer=v1.zeros_initializer())
        ids = v1.random_uniform([args.batch, args.ids], maxval=args.vocab,
                                dtype=tf.int64, seed=10 + args.task_index)
        labels = tf.cast(tf.reduce_sum(ids % 2, axis=1, keepdims=True) > args.ids // 2,
                         tf.float32)
        x = tf.reduce_mean(tf.nn.embedding_lookup(emb, ids), axis=1)
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(
            labels=labels, logits=tf.matmul(h, w2) + b2))
        train_op = v1.train.GradientDescentOptimizer(0.05).minimize(
            loss, global_step=global_step)
    for v in v1.global_variables():
        print(f"[tf1] {v.name} on {v.device}", flush=True)
    return train_op, loss


def main():
    args = parse_args()
    v1.disable_eager_execution()
    v1.set_random_seed(1234)
    cluster = v1.train.ClusterSpec({"ps": args.ps_hosts.split(","),
                                    "worker": args.worker_hosts.split(",")})
    server = v1.train.Server(cluster, job_name=args.job_name,
                             task_index=args.task_index, config=session_config())
    if args.job_name == "ps":
        StepCounter()  # 0: a PS completes no steps
        print(f"[tf1] ps {args.task_index} serving", flush=True)
        server.join()
        return
    train_op, loss = build_graph(args, cluster)
    counter = StepCounter()
    deadline = Deadline(args.max_seconds)
    is_chief = args.task_index == 0
    with v1.Session(server.target, config=session_config()) as sess:
        if is_chief:
            sess.run(v1.global_variables_initializer())
        else:
            # Between-graph: wait for the chief worker to initialise the PS.
            uninit = v1.report_uninitialized_variables()
            while len(sess.run(uninit)) > 0 and not deadline.over():
                time.sleep(0.5)
        print(f"[tf1] worker {args.task_index} training", flush=True)
        while not deadline.over():
            started = time.monotonic()
            _, l = sess.run([train_op, loss])
            counter.add()
            if counter.steps % 100 == 0:
                print(f"[tf1] worker {args.task_index} step {counter.steps} loss {l:.4f}", flush=True)
            deadline.pace(started, args.step_ms / 1000)
    counter.write(force=True)
    print(f"[tf1] worker {args.task_index} done after {counter.steps} steps", flush=True)


if __name__ == "__main__":
    sys.exit(main())

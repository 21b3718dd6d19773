// cgroup_skb programs that do nothing, attached beside the agent's while
// bench/flows/run.sh measures the programs' cost with the kernel's run-time
// accounting on: what the accounting itself charges a run (its clock reads
// and the call) on this machine, measured in the same run rather than
// assumed, so the agent's programs' own cost can be told apart from it.
// linux/bpf.h first: the libbpf header uses its types.
// clang-format off
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
// clang-format on

char LICENSE[] SEC("license") = "GPL";

SEC("cgroup_skb/ingress")
int empty_ingress(struct __sk_buff *skb) { return 1; }

SEC("cgroup_skb/egress")
int empty_egress(struct __sk_buff *skb) { return 1; }

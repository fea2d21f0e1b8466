// Presets, JSON files and the gpus=/nodes= options; the resolved cluster is
// attached to the module as ober.cluster.
// RUN: ober-opt %s --test-ober-cluster="cluster=a100-80gb gpus=64" -o %t.mlir | FileCheck %s --check-prefix=A100
// RUN: FileCheck %s --input-file=%t.mlir --check-prefix=ATTR
// RUN: ober-opt %s --test-ober-cluster="cluster=h200-sxm gpus=4" -o /dev/null | FileCheck %s --check-prefix=H200
// RUN: ober-opt %s --test-ober-cluster="cluster=cpu gpus=4" -o /dev/null | FileCheck %s --check-prefix=CPU
// RUN: ober-opt %s --test-ober-cluster="cluster=%S/Inputs/two-node.json" -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: ober-opt %s --test-ober-cluster="cluster=%S/Inputs/two-node.json nodes=4" -o /dev/null | FileCheck %s --check-prefix=NODES
// A preset given links of its own: as many nodes as the outermost level
// joins (it was checked against the preset's one node and refused), then
// resized by gpus= as any cluster.
// RUN: ober-opt %s --test-ober-cluster="cluster=%S/Inputs/preset-two-levels.json" -o /dev/null | FileCheck %s --check-prefix=PRESET-LINKS
// RUN: ober-opt %s --test-ober-cluster="cluster=%S/Inputs/preset-two-levels.json gpus=64" -o /dev/null | FileCheck %s --check-prefix=PRESET-64

// A100: "name": "NVIDIA A100 80GB SXM"
// A100: "bf16": 312000000000000
// A100: "devices_per_node": 8,
// A100: "group_size": 8,
// A100: "name": "nvlink"
// A100: "group_size": 64,
// A100: "name": "infiniband"
// A100: "nodes": 8
// ATTR: module attributes {ober.cluster = {device = {{.*}}name = "NVIDIA A100 80GB SXM"
// H200: "memory_bytes": 141000000000
// H200: "devices_per_node": 4,
// H200: "nodes": 1
// CPU: "name": "cpu-core"
// CPU: "devices_per_node": 4,
// JSON: "devices_per_node": 4,
// JSON: "name": "roce"
// JSON: "name": "lab",
// JSON: "nodes": 2
// NODES: "group_size": 16,
// NODES: "nodes": 4
// PRESET-LINKS: "name": "NVIDIA H100 SXM"
// PRESET-LINKS: "group_size": 16,
// PRESET-LINKS-NEXT: "latency":
// PRESET-LINKS-NEXT: "name": "infiniband"
// PRESET-LINKS: "nodes": 2
// PRESET-64: "group_size": 64,
// PRESET-64: "nodes": 8

// RUN: not ober-opt %s --test-ober-cluster="cluster=a100-80gb gpus=12" 2>&1 | FileCheck %s --check-prefix=SPLIT
// SPLIT: error: gpus=12 is not a whole number of 8-device nodes of 'a100-80gb' (pass nodes= to choose the node size)
// RUN: not ober-opt %s --test-ober-cluster="cluster=tpu-v9" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: cluster 'tpu-v9' is neither a preset (a100-40gb, a100-80gb, h100-sxm, h200-sxm, max-1550, cpu) nor a readable JSON file
// RUN: not ober-opt %s --test-ober-cluster="cluster=%S/Inputs/bad-bandwidth.json" 2>&1 | FileCheck %s --check-prefix=BANDWIDTH
// BANDWIDTH: error: {{.*}}bad-bandwidth.json: cluster.links[0].bandwidth: must be between 1.00e+06 and 1.00e+15 bytes/s
// RUN: not ober-opt %s --test-ober-cluster="cluster=%S/Inputs/bad-type.json" 2>&1 | FileCheck %s --check-prefix=TYPE
// TYPE: error: {{.*}}bad-type.json: cluster.device.peak_flops.bf16: must be a number
// RUN: not ober-opt %s --test-ober-cluster="cluster=%S/Inputs/no-device.json" 2>&1 | FileCheck %s --check-prefix=DEVICE
// DEVICE: error: {{.*}}no-device.json: cluster.device: must be an object
// RUN: not ober-opt %s --test-ober-cluster="cluster=%S/Inputs/one-level.json" 2>&1 | FileCheck %s --check-prefix=LEVELS
// LEVELS: error: {{.*}}one-level.json: cluster.links: a cluster of 2 nodes needs a level between nodes
// RUN: not ober-opt %s --test-ober-cluster="cluster=a100-80gb gpus=10 nodes=3" 2>&1 | FileCheck %s --check-prefix=UNEVEN
// UNEVEN: error: gpus=10 do not split evenly over nodes=3
// RUN: ober-opt %s --test-ober-cluster="cluster=%S/Inputs/three-level.json gpus=32" -o /dev/null | FileCheck %s --check-prefix=THREE
// THREE: "group_size": 2,
// THREE: "name": "bridge"
// THREE: "group_size": 8,
// THREE: "name": "pcie"
// THREE: "group_size": 32,
// THREE: "name": "ib"
// THREE: "nodes": 4

// Bad JSON clusters and counts name the field and what is allowed.
// RUN: not ober-opt %s --test-ober-cluster="cluster=%S/Inputs/unknown-key.json" 2>&1 | FileCheck %s --check-prefix=KEY
// KEY: error: {{.*}}unknown-key.json: cluster.links[1].nvlink_bandwith: is not a known key (accepted: name, group_size, bandwidth, latency, bus_bandwidth)
// RUN: not ober-opt %s --test-ober-cluster="cluster=%S/Inputs/unknown-top.json" 2>&1 | FileCheck %s --check-prefix=TOPKEY
// TOPKEY: error: {{.*}}unknown-top.json: cluster.gpus_per_node: is not a known key (accepted: name, preset, device, devices_per_node, nodes, links)
// RUN: not ober-opt %s --test-ober-cluster="cluster=%S/Inputs/unknown-device-key.json" 2>&1 | FileCheck %s --check-prefix=DEVKEY
// DEVKEY: error: {{.*}}unknown-device-key.json: cluster.device.memory_bandwith: is not a known key (accepted: name, peak_flops, memory_bytes, memory_bandwidth, matmul_efficiency, memory_efficiency, kernel_overhead, launch_overhead, launch_overlap, transfer_overhead, vector_flops, special_flops, gemm, memory_bandwidth_by_size, fused_softmax, full_recompute)
// RUN: not ober-opt %s --test-ober-cluster="cluster=%S/Inputs/unknown-flops-type.json" 2>&1 | FileCheck %s --check-prefix=FLOPTYPE
// FLOPTYPE: error: {{.*}}unknown-flops-type.json: cluster.device.peak_flops.bfloat16: is not an element type (known: f64, f32, tf32, bf16, f16, f8)
// RUN: not ober-opt %s --test-ober-cluster="cluster=%S/Inputs/links-out-of-order.json" 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: error: {{.*}}links-out-of-order.json: cluster.links[1].group_size: must be a multiple of links[0].group_size = 16 (levels go innermost first)
// RUN: not ober-opt %s --test-ober-cluster="cluster=%S/Inputs/links-not-dividing.json" 2>&1 | FileCheck %s --check-prefix=DIVIDE
// DIVIDE: error: {{.*}}links-not-dividing.json: cluster.links[0].group_size: must divide, or be a multiple of, devices_per_node = 8
// RUN: not ober-opt %s --test-ober-cluster="cluster=%S/Inputs/huge-node.json" 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: {{.*}}huge-node.json: cluster.devices_per_node: must be between 1 and 4096
// RUN: not ober-opt %s --test-ober-cluster="cluster=a100-80gb gpus=0" 2>&1 | FileCheck %s --check-prefix=ZEROGPUS
// ZEROGPUS: error: gpus=0 must be between 1 and 1048576
// RUN: not ober-opt %s --test-ober-cluster="cluster=a100-80gb nodes=0" 2>&1 | FileCheck %s --check-prefix=ZERONODES
// ZERONODES: error: nodes=0 must be between 1 and 1048576
// RUN: not ober-opt %s --test-ober-cluster="cluster=a100-80gb gpus=-8" 2>&1 | FileCheck %s --check-prefix=NEGGPUS
// NEGGPUS: error: gpus=-8 must be between 1 and 1048576
// RUN: not ober-opt %s --test-ober-cluster="cluster=cpu gpus=5000" 2>&1 | FileCheck %s --check-prefix=BIGNODE
// BIGNODE: error: gpus=5000 makes nodes of 5000 devices; at most 4096 fit a node (pass nodes= to spread them)
module {
}

// A file can start from a preset and change fields of it (objects merge):
// here a kernel library's softmax fusion rule and the node's name.
// RUN: ober-opt %s --test-ober-cluster="cluster=%S/Inputs/megatron-a100.json gpus=16" -o /dev/null | FileCheck %s --check-prefix=PRESET
// PRESET: "fused_softmax": {
// PRESET-NEXT: "batch_multiple": 4,
// PRESET-NEXT: "fallback_kernels": 5,
// PRESET-NEXT: "max_keys": 4096
// PRESET: "memory_bytes": 80000000000
// PRESET: "name": "NVIDIA A100 80GB SXM"
// PRESET: "bf16": 312000000000000
// PRESET: "name": "nvlink"
// PRESET: "name": "megatron-a100",
// PRESET: "nodes": 2
// RUN: not ober-opt %s --test-ober-cluster="cluster=%S/Inputs/bad-preset.json" 2>&1 | FileCheck %s --check-prefix=BADPRESET
// BADPRESET: error: {{.*}}bad-preset.json: cluster.preset: must name a preset (a100-40gb, a100-80gb, h100-sxm, h200-sxm, max-1550, cpu)
// RUN: not ober-opt %s --test-ober-cluster="cluster=%S/Inputs/bad-softmax.json" 2>&1 | FileCheck %s --check-prefix=SOFTMAX
// SOFTMAX: error: {{.*}}bad-softmax.json: cluster.device.fused_softmax.batch_multiple: must be between 0 (always fused) and 4096
// RUN: not ober-opt %s --test-ober-cluster="cluster=%S/Inputs/bad-softmax-key.json" 2>&1 | FileCheck %s --check-prefix=SOFTKEY
// SOFTKEY: error: {{.*}}bad-softmax-key.json: cluster.device.fused_softmax.batch: is not a known key (accepted: batch_multiple, max_keys, fallback_kernels)

// What full recomputation runs again: the whole forward pass (activation
// checkpointing that reruns each layer, as Megatron-LM does), or by default
// what the backward pass reads (the project's partitioner; not written).
// RUN: ober-opt %s --test-ober-cluster="cluster=%S/Inputs/checkpoint-a100.json gpus=8" -o /dev/null | FileCheck %s --check-prefix=WHOLE
// WHOLE: "full_recompute": "forward"
// RUN: ober-opt %s --test-ober-cluster="cluster=a100-80gb gpus=8" -o /dev/null | FileCheck %s --check-prefix=NEEDED
// NEEDED-NOT: full_recompute
// RUN: not ober-opt %s --test-ober-cluster="cluster=%S/Inputs/bad-recompute.json" 2>&1 | FileCheck %s --check-prefix=BADRECOMPUTE
// BADRECOMPUTE: error: {{.*}}bad-recompute.json: cluster.device.full_recompute: must be "needed" (rebuild what the backward pass reads) or "forward" (run the whole forward pass again), not "all"

// What ober-gpu-calibrate wrote on an H200 (cuBLASLt GEMM tables, copy
// bandwidth, launch time over the h200-sxm preset) is a cluster file.
// RUN: ober-opt %s --test-ober-cluster="cluster=%S/Inputs/h200-measured.json gpus=8" -o /dev/null | FileCheck %s --check-prefix=MEASURED
// MEASURED: "launch_overhead": 3.67
// MEASURED: "name": "NVIDIA H200"
// MEASURED: "name": "measured-NVIDIA H200",

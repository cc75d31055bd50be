package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/tableconform/conform/bench"
)

// deployDir holds the Kubernetes manifests of sharded benchmark runs.
var deployDir = filepath.Join("..", "..", "deploy", "kubernetes")

// renderManifest reads a manifest and replaces its placeholders as deploy/kubernetes/README.md
// tells users to, and fails if any placeholder is left.
func renderManifest(t *testing.T, name string, values map[string]string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(deployDir, name))
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	for k, v := range values {
		s = strings.ReplaceAll(s, k, v)
	}
	body := regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(s, "") // comments may name placeholders
	if left := regexp.MustCompile(`__[A-Z_]+__`).FindString(body); left != "" {
		t.Fatalf("%s: placeholder %s left after rendering", name, left)
	}
	return []byte(s)
}

// decodeStrict decodes a manifest into a Kubernetes API type, refusing unknown and
// duplicate fields, as the API server's strict field validation does.
func decodeStrict(t *testing.T, name string, data []byte, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func envOf(c corev1.Container, name string) (corev1.EnvVar, bool) {
	i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name })
	if i < 0 {
		return corev1.EnvVar{}, false
	}
	return c.Env[i], true
}

func argAfter(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// mountedClaim returns the claim of the volume mounted at the start of path.
func mountedClaim(spec corev1.PodSpec, c corev1.Container, path string) string {
	for _, m := range c.VolumeMounts {
		if path == m.MountPath || strings.HasPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/") {
			for _, v := range spec.Volumes {
				if v.Name == m.Name && v.PersistentVolumeClaim != nil {
					return v.PersistentVolumeClaim.ClaimName
				}
			}
		}
	}
	return ""
}

// TestKubernetesManifests decodes deploy/kubernetes strictly with the Kubernetes API types,
// rendered for 4 shards, and checks what conform relies on: an Indexed Job whose
// completions, parallelism and CONFORM_SHARD_COUNT agree, a run id shared by its pods, the
// connection string from the Secret, results on the shared claim that the merge reads, the
// image's user, and arguments the CLI accepts.
func TestKubernetesManifests(t *testing.T) {
	const shards, uid = 4, "0b6c3f7e-1f8e-4c9a-9d55-2b7f0c1a9e11"
	image := map[string]string{"__IMAGE__": "registry.example.com/conform:v0.1.0"}

	if err := yaml.UnmarshalStrict(renderManifest(t, "results-pvc.yaml", nil), &corev1.PersistentVolumeClaim{}); err != nil {
		t.Fatal(err)
	}
	var pvc corev1.PersistentVolumeClaim
	decodeStrict(t, "results-pvc.yaml", renderManifest(t, "results-pvc.yaml", nil), &pvc)
	if pvc.Kind != "PersistentVolumeClaim" || !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("results-pvc.yaml: kind %s, access modes %v: the shards' pods may run on different nodes", pvc.Kind, pvc.Spec.AccessModes)
	}
	var secret corev1.Secret
	decodeStrict(t, "secret.example.yaml", renderManifest(t, "secret.example.yaml", nil), &secret)

	raw, err := os.ReadFile(filepath.Join(deployDir, "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(raw, &batchv1.Job{}); err == nil {
		t.Error("job.yaml decodes without rendering: its shard count would be a default")
	}
	var job batchv1.Job
	decodeStrict(t, "job.yaml", renderManifest(t, "job.yaml", map[string]string{"__SHARDS__": strconv.Itoa(shards), "__IMAGE__": image["__IMAGE__"]}), &job)
	js := job.Spec
	if job.APIVersion != "batch/v1" || job.Kind != "Job" {
		t.Fatalf("job.yaml: %s %s", job.APIVersion, job.Kind)
	}
	if js.CompletionMode == nil || *js.CompletionMode != batchv1.IndexedCompletion {
		t.Error("job.yaml: not an Indexed Job: its pods would get no JOB_COMPLETION_INDEX")
	}
	if js.Completions == nil || js.Parallelism == nil || *js.Completions != shards || *js.Parallelism != shards {
		t.Errorf("job.yaml: completions %v, parallelism %v; want %d each (one pod per shard, all at once)", js.Completions, js.Parallelism, shards)
	}
	if js.BackoffLimitPerIndex == nil || *js.BackoffLimitPerIndex != 0 {
		t.Error("job.yaml: a failed shard must not be retried (its tables' names would repeat)")
	}
	pod := js.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || len(pod.Containers) != 1 {
		t.Fatalf("job.yaml: restart policy %s, %d containers", pod.RestartPolicy, len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.Image != image["__IMAGE__"] {
		t.Errorf("job.yaml: image %q", c.Image)
	}
	if e, ok := envOf(c, bench.EnvShardCount); !ok || e.Value != strconv.Itoa(shards) {
		t.Errorf("job.yaml: %s = %+v, want %d (the completions)", bench.EnvShardCount, e, shards)
	}
	if _, ok := envOf(c, bench.EnvShardIndex); ok {
		t.Errorf("job.yaml sets %s, which Kubernetes sets per pod", bench.EnvShardIndex)
	}
	if e, ok := envOf(c, bench.EnvRunID); !ok || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil ||
		e.ValueFrom.FieldRef.FieldPath != "metadata.labels['batch.kubernetes.io/controller-uid']" {
		t.Errorf("job.yaml: %s must be the Job's uid, the same in every pod: %+v", bench.EnvRunID, e)
	}
	if c.Args[0] != "bench" {
		t.Fatalf("job.yaml: args %v", c.Args)
	}
	name, variable, _ := strings.Cut(argAfter(c.Args, "--backend"), "=env:")
	e, ok := envOf(c, variable)
	if name == "" || !ok || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != secret.Name {
		t.Fatalf("job.yaml: --backend %q must read its connection string from the Secret %s", argAfter(c.Args, "--backend"), secret.Name)
	}
	if _, ok := secret.StringData[e.ValueFrom.SecretKeyRef.Key]; !ok {
		t.Errorf("job.yaml reads key %q, secret.example.yaml holds %v", e.ValueFrom.SecretKeyRef.Key, secret.StringData)
	}
	out := argAfter(c.Args, "--out")
	if claim := mountedClaim(pod, c, out); claim != pvc.Name {
		t.Errorf("job.yaml: --out %s is on claim %q, want %q", out, claim, pvc.Name)
	}
	user := regexp.MustCompile(`(?m)^USER (\d+)`).FindSubmatch(must(os.ReadFile(filepath.Join("..", "..", "Dockerfile"))))
	if user == nil || pod.SecurityContext == nil || pod.SecurityContext.RunAsUser == nil || strconv.FormatInt(*pod.SecurityContext.RunAsUser, 10) != string(user[1]) {
		t.Errorf("job.yaml: runAsUser does not match the image's USER %s", user)
	}
	// The CLI accepts the arguments (with --list it stops before opening the backend).
	args := slices.Clone(c.Args)
	for i := range args {
		args[i] = strings.ReplaceAll(args[i], "$("+bench.EnvRunID+")", uid)
	}
	if stdout, stderr, code := conform(t, append(args, "--list")...); code != 0 || !strings.Contains(stdout, "PointGet") {
		t.Errorf("conform %v --list: exit %d\n%s%s", args, code, stdout, stderr)
	}

	var merge corev1.Pod
	decodeStrict(t, "merge-pod.yaml", renderManifest(t, "merge-pod.yaml", map[string]string{"__RUN_ID__": uid, "__IMAGE__": image["__IMAGE__"]}), &merge)
	mc := merge.Spec.Containers[0]
	expanded := strings.ReplaceAll(out, "$("+bench.EnvRunID+")", uid)
	if len(mc.Args) < 3 || mc.Args[0] != "bench" || mc.Args[1] != "merge" || mc.Args[2] != expanded {
		t.Errorf("merge-pod.yaml: args %v, want bench merge %s", mc.Args, expanded)
	}
	if claim := mountedClaim(merge.Spec, mc, mc.Args[2]); claim != pvc.Name {
		t.Errorf("merge-pod.yaml reads claim %q, the shards write %q", claim, pvc.Name)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

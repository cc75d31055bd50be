package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
)

// deploy/kubernetes/README.md states the minimum Kubernetes version, and it is no older
// than what the Job uses needs: backoffLimitPerIndex on by default from 1.29 (KEP-3850), the
// batch.kubernetes.io/controller-uid label from 1.27 (issue 34, item 16: not stated).
func TestKubernetesReadmeStatesTheMinimumVersion(t *testing.T) {
	var job batchv1.Job
	decodeStrict(t, "job.yaml", renderManifest(t, "job.yaml", map[string]string{"__SHARDS__": "4", "__IMAGE__": "conform:test"}), &job)
	needs := 0
	if job.Spec.BackoffLimitPerIndex != nil || job.Spec.MaxFailedIndexes != nil {
		needs = max(needs, 29)
	}
	raw, err := os.ReadFile(filepath.Join(deployDir, "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`batch\.kubernetes\.io/controller-uid`).Match(raw) {
		needs = max(needs, 27)
	}
	readme, err := os.ReadFile(filepath.Join(deployDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Kubernetes \*\*1\.(\d+) or later\*\*`).FindSubmatch(readme)
	if m == nil {
		t.Fatal("deploy/kubernetes/README.md states no minimum Kubernetes version (\"Kubernetes **1.N or later**\")")
	}
	if stated, _ := strconv.Atoi(string(m[1])); stated < needs {
		t.Errorf("the README states Kubernetes 1.%d or later; the Job needs 1.%d", stated, needs)
	}
	if needs == 0 {
		t.Error("the Job uses neither backoffLimitPerIndex nor the controller-uid label: the check checks nothing")
	}
}

package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Report is the result of replaying recordings against one backend.
type Report struct {
	Backend    string            `json:"backend"`
	Profile    string            `json:"profile"`
	Generated  time.Time         `json:"generated"`
	Totals     Totals            `json:"totals"`
	Recordings []RecordingResult `json:"recordings"`
	// Unreadable lists the files that could not be read, one line each, and why a run stopped
	// early.
	Unreadable []string `json:"unreadable,omitempty"`
}

// Totals counts the exchanges of a report. It is also the corpus agreement the conformance
// report shows per backend.
type Totals struct {
	Backend          string   `json:"backend"`
	Files            int      `json:"files"`
	FilesSkipped     int      `json:"filesSkipped"`
	Agree            int      `json:"agree"`
	Disagree         int      `json:"disagree"`
	Skipped          int      `json:"skipped"`
	Unreadable       int      `json:"unreadable"`
	DisagreeingFiles []string `json:"disagreeingFiles,omitempty"`
	// Stopped says why the replay stopped before its last recording, when it did: the
	// replay then covers less than it was given, and never exits 0.
	Stopped string `json:"stopped,omitempty"`
}

// maxSilentRecordings is how many recordings in a row may end without an answer before a
// run stops: a backend that hangs is not waited for once per recording.
const maxSilentRecordings = 2

// Source is one recording to replay: its name and bytes.
type Source struct {
	Name string
	Data []byte
}

// Collect reads the recordings named by paths: files, or directories searched for .json,
// .yaml and .yml files. A path that cannot be read is an error.
func Collect(paths []string) ([]Source, error) {
	var out []Source
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			out = append(out, Source{Name: p, Data: data})
			continue
		}
		srcs, err := CollectFS(os.DirFS(p), p)
		if err != nil {
			return nil, err
		}
		out = append(out, srcs...)
	}
	return out, nil
}

// CollectFS reads every recording file under fsys; names are prefixed with base.
func CollectFS(fsys fs.FS, base string) ([]Source, error) {
	var out []Source
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".json", ".yaml", ".yml":
		default:
			return nil
		}
		if d.IsDir() {
			return nil
		}
		data, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		out = append(out, Source{Name: filepath.Join(base, path), Data: data})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// Run replays every source in order and returns the report. A source that cannot be parsed
// is listed in Unreadable and written to log as one line; nothing stops the run but ctx.
func (r *Replayer) Run(ctx context.Context, sources []Source, log io.Writer) Report {
	rep := Report{Backend: r.Target.Name, Profile: r.Profile, Generated: time.Now().UTC()}
	if rep.Profile == "" {
		rep.Profile = ProfileStorage
	}
	silent, stopped := 0, ""
	for i, s := range sources {
		if ctx.Err() != nil || silent >= maxSilentRecordings {
			line := fmt.Sprintf("stopped before %s and %d more recordings: ", s.Name, len(sources)-i-1)
			if ctx.Err() != nil {
				line += ctx.Err().Error()
			} else {
				line += fmt.Sprintf("%s gave no answer in %d recordings in a row", rep.Backend, silent)
			}
			rep.Unreadable = append(rep.Unreadable, line)
			if log != nil {
				fmt.Fprintln(log, line)
			}
			stopped = line
			break
		}
		rec, err := Parse(s.Name, s.Data)
		if err != nil {
			line := fmt.Sprintf("%s: skipped, %s", s.Name, firstLine(err.Error()))
			rep.Unreadable = append(rep.Unreadable, line)
			if log != nil {
				fmt.Fprintln(log, line)
			}
			continue
		}
		res := r.Replay(ctx, rec)
		res.File = s.Name
		if res.NoAnswer {
			silent++
		} else if res.Skipped == "" {
			silent = 0
		}
		if res.Skipped != "" && log != nil {
			fmt.Fprintf(log, "%s: skipped, %s\n", s.Name, res.Skipped)
		}
		rep.Recordings = append(rep.Recordings, res)
	}
	rep.Totals = rep.count()
	rep.Totals.Stopped = stopped
	return rep
}

func (rep Report) count() Totals {
	t := Totals{Backend: rep.Backend, Unreadable: len(rep.Unreadable)}
	for _, rec := range rep.Recordings {
		t.Files++
		if rec.Skipped != "" {
			t.FilesSkipped++
			continue
		}
		disagree := false
		for _, x := range rec.Exchanges {
			switch x.Outcome {
			case OutcomeAgree:
				t.Agree++
			case OutcomeDisagree:
				t.Disagree++
				disagree = true
			default:
				t.Skipped++
			}
		}
		if disagree {
			t.DisagreeingFiles = append(t.DisagreeingFiles, rec.File)
		}
	}
	return t
}

// Disagreements lists every disagreeing exchange as "file #index METHOD path: difference".
func (rep Report) Disagreements() []string {
	var out []string
	for _, rec := range rep.Recordings {
		for _, x := range rec.Exchanges {
			if x.Outcome == OutcomeDisagree {
				out = append(out, fmt.Sprintf("%s #%d %s %s: %s", filepath.Base(rec.File), x.Index, x.Method, x.Path, strings.Join(x.Differences, "; ")))
			}
		}
	}
	return out
}

// WriteJSON writes the report as indented JSON.
func (rep Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// Sentence says the agreement in one line.
func (t Totals) Sentence() string {
	s := fmt.Sprintf("%s: %d exchanges agree, %d disagree, %d skipped (%d recordings, %d skipped whole",
		t.Backend, t.Agree, t.Disagree, t.Skipped, t.Files, t.FilesSkipped)
	if t.Unreadable > 0 {
		s += fmt.Sprintf(", %d unreadable", t.Unreadable)
	}
	s += ")"
	if t.Stopped != "" {
		s += "; " + t.Stopped
	}
	return s
}

// WriteMarkdown writes the report in the conformance report's style: the totals, then every
// disagreement with the recorded and the live answer, then what was skipped and why.
func (rep Report) WriteMarkdown(w io.Writer) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "# Replay against %s\n\n", rep.Backend)
	fmt.Fprintf(b, "Profile %s, %s.\n\n", rep.Profile, rep.Generated.Format(time.RFC3339))
	fmt.Fprintf(b, "**%s**\n\n", rep.Totals.Sentence())
	b.WriteString("| Recording | Agree | Disagree | Skipped |\n|---|---|---|---|\n")
	for _, rec := range rep.Recordings {
		if rec.Skipped != "" {
			fmt.Fprintf(b, "| %s | | | whole recording: %s |\n", mdCell(filepath.Base(rec.File)), mdCell(rec.Skipped))
			continue
		}
		var a, d, s int
		for _, x := range rec.Exchanges {
			switch x.Outcome {
			case OutcomeAgree:
				a++
			case OutcomeDisagree:
				d++
			default:
				s++
			}
		}
		fmt.Fprintf(b, "| %s | %d | %d | %d |\n", mdCell(filepath.Base(rec.File)), a, d, s)
	}
	b.WriteString("\n## Disagreements\n\n")
	any := false
	for _, rec := range rep.Recordings {
		for _, x := range rec.Exchanges {
			if x.Outcome != OutcomeDisagree {
				continue
			}
			any = true
			fmt.Fprintf(b, "### %s #%d: %s %s\n\n", filepath.Base(rec.File), x.Index, x.Method, mdCode(x.Path))
			for _, d := range x.Differences {
				fmt.Fprintf(b, "- %s\n", d)
			}
			fmt.Fprintf(b, "\nRecorded: %s\n\nLive: %s\n\n", answerText(x.Recorded), answerText(x.Live))
		}
	}
	if !any {
		b.WriteString("None.\n\n")
	}
	b.WriteString("## Skipped\n\n")
	for _, rec := range rep.Recordings {
		for _, x := range rec.Exchanges {
			if x.Outcome == OutcomeSkipped {
				fmt.Fprintf(b, "- %s #%d %s %s: %s\n", filepath.Base(rec.File), x.Index, x.Method, mdCode(x.Path), x.Reason)
			}
		}
	}
	for _, u := range rep.Unreadable {
		fmt.Fprintf(b, "- %s\n", u)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func answerText(a *Answer) string {
	if a == nil {
		return "(none)"
	}
	s := fmt.Sprintf("%d", a.Status)
	if a.Code != "" {
		s += " " + a.Code
	}
	if len(a.Continuation) > 0 {
		s += ", continuation " + strings.Join(a.Continuation, ", ")
	}
	for _, l := range a.Summary {
		s += "<br>" + mdCode(l)
	}
	return s
}

func mdCell(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") }

func mdCode(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "'") + "`"
}

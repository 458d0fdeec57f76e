package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// printer writes results for people, or as protojson lines with --json.
type printer struct {
	w    io.Writer
	json bool
}

func (p *printer) message(m proto.Message) error {
	b, err := protojson.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode %T: %w", m, err)
	}
	b = append(b, '\n')
	if _, err := p.w.Write(b); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

func (p *printer) line(s string) error {
	if _, err := fmt.Fprintln(p.w, s); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// handler prints one handler as one line.
func (p *printer) handler(h *wfdv1.Handler) error {
	if p.json {
		return p.message(h)
	}
	return p.line(handlerLine(h))
}

// handlers prints handlers as a table.
func (p *printer) handlers(hs []*wfdv1.Handler) error {
	if p.json {
		for _, h := range hs {
			if err := p.message(h); err != nil {
				return err
			}
		}
		return nil
	}
	if len(hs) == 0 {
		return p.line("no handlers")
	}
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	owners := anyOwner(hs) // replicas (handlers.go)
	fmt.Fprintln(tw, "ID\tWORKFLOW\tSTATUS\t"+ownerColumn(owners, "OWNER", "")+"DETAIL")
	for _, h := range hs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s%s\n", h.GetHandlerId(), h.GetWorkflow(), handlerState(h), ownerColumn(owners, h.GetOwner(), "-"), handlerDetail(h))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// handlerDetails prints everything about one handler.
func (p *printer) handlerDetails(h *wfdv1.Handler) error {
	if p.json {
		return p.message(h)
	}
	return p.fields(handlerFields(h))
}

// fields prints "key: value" lines with the values aligned; a line with
// an empty key continues the one above.
func (p *printer) fields(fs [][2]string) error {
	tw := tabwriter.NewWriter(p.w, 0, 0, 1, ' ', 0)
	for _, f := range fs {
		if f[0] == "" {
			fmt.Fprintf(tw, "\t%s\n", f[1])
			continue
		}
		fmt.Fprintf(tw, "%s:\t%s\n", f[0], f[1])
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

func (p *printer) record(r *wfdv1.Record) error {
	if p.json {
		return p.message(r)
	}
	return p.line(recordLine(r))
}

func (p *printer) workflows(ws []*wfdv1.Workflow) error {
	if p.json {
		for _, w := range ws {
			if err := p.message(w); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tSTEPS\tINPUT\tEVENTS FROM OUTSIDE\tSERVED BY\tDESCRIPTION")
	for _, w := range ws {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", w.GetName(), orDash(w.GetVersion()), list(w.GetSteps()), inputText(w), eventTypesText(w),
			servedText(w), w.GetDescription())
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// workflowDetails prints everything about one workflow: its current
// version's definition, then its versions.
func (p *printer) workflowDetails(w *wfdv1.Workflow) error {
	if p.json {
		return p.message(w)
	}
	if err := p.fields(workflowFields(w)); err != nil {
		return err
	}
	if len(w.GetVersions()) == 0 {
		return nil
	}
	if err := p.line(""); err != nil {
		return err
	}
	return p.versions(w.GetVersions())
}

// task prints one task as one line.
func (p *printer) task(t *wfdv1.Task) error {
	if p.json {
		return p.message(t)
	}
	return p.line(taskLine(t))
}

// tasks prints tasks as a table.
func (p *printer) tasks(ts []*wfdv1.Task) error {
	if p.json {
		for _, t := range ts {
			if err := p.message(t); err != nil {
				return err
			}
		}
		return nil
	}
	if len(ts) == 0 {
		return p.line("no tasks")
	}
	now := time.Now()
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tASSIGNEE\tTITLE\tHANDLER\tAGE\tDEADLINE")
	for _, t := range ts {
		who := assigneeText(t.GetAssignee())
		if c := t.GetClaimedBy(); c != "" {
			who += ", claimed by " + c
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.GetTaskId(), taskStatusName(t.GetStatus()), who,
			t.GetTitle(), t.GetHandlerId(), taskAge(t, now), relativeText(t.GetDeadline(), now))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// taskDetails prints everything about one task.
func (p *printer) taskDetails(t *wfdv1.Task) error {
	if p.json {
		return p.message(t)
	}
	return p.fields(taskFields(t))
}

func (p *printer) published(key string, r *wfdv1.PublishEventResponse) error {
	if p.json {
		return p.message(r)
	}
	return p.line(publishedText(key, r))
}

func (p *printer) stats(s *wfdv1.GetStatsResponse) error {
	if p.json {
		return p.message(s)
	}
	return p.fields(statsFields(s))
}

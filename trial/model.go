package trial

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/llm"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// modelEvidence is the model proxy's evidence (proxies/llm): what it saw of the trial's
// model calls, from the live proxy at url, else from the record's model rows.
type modelEvidence struct {
	live *llm.ModelProxy // nil: the trial is not live here
	url  string
}

func (modelEvidence) part() string { return "model proxy" }

// calls puts what the proxy saw into the result and the wall's reach. A model fault that
// could not apply leaves the trial without a verdict. The trial's fault is the tool
// condition and the model fault together: clean when neither is armed, fired when either
// did.
func (e modelEvidence) calls(v *verification) {
	s, res := v.spec, &v.res
	m, why := modelResult(s, e.live, e.url, v.log)
	m.NeverCalled = s.Model.Armed() && m.Calls == 0 && v.ranToItsEnd && v.log != nil
	res.Model = m
	v.reach.Model, v.reach.ModelCalls, v.reach.ModelFired = true, m.Calls, m.Fired
	if why != "" && m.Calls > 0 {
		v.noVerdict(why)
	} else if why != "" {
		// No model call at all: the agent never met the model proxy, which Reach
		// says with this (more particular) sentence.
		v.reach.ModelWhy = why
	}
	if s.Model.Armed() {
		v.clean = false
		res.Fired += m.Fired
		if m.Fired > 0 {
			res.FaultsFired = append(res.FaultsFired, "model:"+m.Fault)
		}
	}
}

// modelResult is what the trial's model proxy saw: the live proxy's counts (proxy, at
// url), else the counts of the record's model rows. why is the reason the trial has no verdict, when it has
// none because of the model proxy: a fault that could not apply, or a faulted trial in
// which no model call reached the proxy (the fault was never tested).
func modelResult(s *spec.Spec, proxy *llm.ModelProxy, url string, log *record.Log) (m *run.ModelResult, why string) {
	m = &run.ModelResult{Fault: s.Model.FaultName()}
	var refused string
	if log != nil {
		for _, r := range log.Rows {
			if r.Transport != llm.TransportLLM {
				continue
			}
			switch {
			case r.Type == record.TypeCall:
				m.Calls++
				if r.Hit != nil && r.Hit.Fired {
					m.Fired++
					continue
				}
				var at struct {
					Position string `json:"position"`
				}
				json.Unmarshal(r.Args, &at)
				if text, calls := llm.TurnParts(r.Reply); at.Position != "" {
					if text && !slices.Contains(m.TextAt, at.Position) {
						m.TextAt = append(m.TextAt, at.Position)
					}
					if calls && !slices.Contains(m.ToolCallsAt, at.Position) {
						m.ToolCallsAt = append(m.ToolCallsAt, at.Position)
					}
				}
			case r.Type == record.TypeError:
				m.Calls++
				if r.Hit != nil && r.Hit.Fired {
					m.Failed++
					if refused == "" {
						refused = r.Reason
						if needs, ok := faults.LackedPart(r.Hit.How); ok {
							var at struct {
								Position string `json:"position"`
							}
							json.Unmarshal(r.Args, &at)
							m.Lacked, m.LackedAt = needs, at.Position
						}
					}
				}
			}
		}
	}
	if proxy != nil {
		st := proxy.Stats()
		m.Proxy, m.Calls, m.Fired, m.Failed = url, st.Calls, st.Fired, st.Failed
	}
	switch {
	case m.Failed > 0:
		if refused == "" {
			refused = "model fault could not apply"
		}
		return m, fmt.Sprintf("%s (at %d of %d model calls)", refused, m.Failed, m.Calls)
	case s.Model.Armed() && m.Calls == 0:
		at := "{llm_url}"
		if m.Proxy != "" {
			at += " (" + m.Proxy + ")"
		}
		return m, fmt.Sprintf("no model call reached the model proxy at %s, so model fault %s was never tested: point the agent's model client at {llm_url}", at, m.Fault)
	}
	return m, ""
}

package matrix

import (
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
)

type htmlCell struct {
	Key, Text, State, Conf, Mark, Basis, Link, Value, Group string
	Changed                                                 bool
	Change                                                  string
}

type htmlRow struct {
	Name, Anchor, Version, Provider, Error, Wall string
	Changed                                      bool
	Cells                                        []htmlCell
	Changes                                      []Change
}

type htmlFilter struct{ Key, Title, Value string }

type htmlPage struct {
	Retrylab, Against, Legend string
	Columns                   []Column
	Groups                    []string
	Providers                 []string
	Filters                   []htmlFilter
	Rows                      []htmlRow
}

// HTML writes index.html: one self-contained page (no request leaves it),
// the table sortable by any column, filtered by provider, by behaviour (a
// column's value) and by column group, readable on a phone (the client
// column stays in view as the table scrolls).
func HTML(w io.Writer, m *Matrix) error {
	pg := htmlPage{Retrylab: m.Retrylab, Against: m.Against, Legend: Legend, Columns: Columns}
	for _, c := range Columns {
		if !slices.Contains(pg.Groups, c.Group) {
			pg.Groups = append(pg.Groups, c.Group)
		}
	}
	seen := map[htmlFilter]bool{}
	for i := range m.Clients {
		e := &m.Clients[i]
		if !slices.Contains(pg.Providers, e.Provider) {
			pg.Providers = append(pg.Providers, e.Provider)
		}
		r := htmlRow{Name: e.Name, Anchor: anchor(e.Name), Version: e.Version, Provider: e.Provider, Error: e.Error,
			Changed: e.Changed("version") || e.Changed("client"), Changes: e.Changes}
		if e.WallMs > 0 {
			r.Wall = fmt.Sprintf("%.0fs", float64(e.WallMs)/1000) + e.floorNote()
		}
		for j, c := range e.Cells() {
			hc := htmlCell{Key: c.Key, Text: c.Text, State: strings.NewReplacer(" ", "-", "/", "-").Replace(c.State), Conf: c.Confidence, Mark: confMark(c.Confidence),
				Basis: c.Basis, Link: e.evidenceLink(c), Value: c.Value, Group: Columns[j].Group, Changed: e.Changed(c.Key)}
			for _, ch := range e.Changes {
				if ch.Column == c.Key {
					hc.Change = ch.Before + " → " + ch.After
				}
			}
			if c.State == Known && Columns[j].Group != "backoff" && Columns[j].Group != "outage" || c.Key == "maxRetries" {
				f := htmlFilter{Key: c.Key, Title: Columns[j].Title, Value: c.Text}
				if c.State == Known && !seen[f] {
					seen[f] = true
					pg.Filters = append(pg.Filters, f)
				}
			}
			r.Cells = append(r.Cells, hc)
		}
		pg.Rows = append(pg.Rows, r)
	}
	slices.Sort(pg.Providers)
	slices.SortStableFunc(pg.Filters, func(a, b htmlFilter) int {
		return strings.Compare(a.Key+"\x00"+a.Value, b.Key+"\x00"+b.Value)
	})
	return pageTmpl.Execute(w, pg)
}

var pageTmpl = template.Must(template.New("matrix").Parse(pageHTML))

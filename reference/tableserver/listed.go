package tableserver

import (
	"context"
	"net/http"
	"sync"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/wire"
)

// listingBackend is a backend that hands out entities with their properties listed in name
// order, decoded into buffers the caller owns (reference.Service, persist.Store): the server
// renders them without a map per entity, and reuses the buffers. Each method answers as its
// mapped counterpart does (QueryEntities, GetEntity): the same entities, order,
// continuations and errors.
type listingBackend interface {
	QueryEntitiesListed(ctx context.Context, table string, q api.Query, into []api.ListedEntity) (api.ListedPage, error)
	GetEntityListed(ctx context.Context, table, partitionKey, rowKey string, sel []string, props []api.Property) (api.ListedEntity, error)
}

// listedPages and listedProperties recycle the buffers of listed answers. A buffer is taken
// by one request, which alone writes and reads it until its answer is written; it is
// emptied before it goes back, so that nothing of an answer reaches a later one but the
// arrays, which a backend overwrites before it hands out their contents.
var (
	listedPages      sync.Pool // *[]api.ListedEntity
	listedProperties sync.Pool // *[]api.Property
)

// Bounds on what the pools keep, so that one large answer does not stay in memory: entities
// of a page, properties of one of its entities, and properties of a read entity.
const (
	maxPooledEntities         = 256
	maxPooledEntityProperties = 16
	maxPooledProperties       = 4096
)

func (x *exchange) queryEntitiesListed(ctx context.Context, lb listingBackend, table string, q api.Query) error {
	bp, _ := listedPages.Get().(*[]api.ListedEntity)
	if bp == nil {
		bp = new([]api.ListedEntity)
	}
	page, err := lb.QueryEntitiesListed(ctx, table, q, *bp)
	if err != nil {
		listedPages.Put(bp)
		return err
	}
	// The kept entities are copied out (sasVisible), so that no two elements of the buffer
	// share an array.
	ents := sasVisible(x.sas, page.Entities, func(e *api.ListedEntity) (string, string) { return e.PartitionKey, e.RowKey })
	doc := x.document(table, q.Select)
	wire.SetContinuationHeader(x.w.Header(), page.Continuation)
	err = x.writeEntitySetOf(len(ents), func(b []byte, i int) ([]byte, error) {
		return wire.AppendListedEntitySetItem(b, i, &ents[i], doc)
	}, doc)
	releaseListedPage(bp, page.Entities)
	return err
}

// releaseListedPage empties the entities a listed page used, keeping their arrays but
// large ones, and hands them back in bp, unless they are more than the pool keeps. What lies
// past a page's entities, and past an entity's properties, was emptied when last used: a
// backend writes only what it hands out.
func releaseListedPage(bp *[]api.ListedEntity, ents []api.ListedEntity) {
	if cap(ents) > maxPooledEntities {
		return
	}
	for i := range ents {
		ps := ents[i].Properties
		clear(ps) // do not hold the store's bytes from the pool
		if cap(ps) > maxPooledEntityProperties {
			ps = nil
		}
		ents[i] = api.ListedEntity{Properties: ps[:0]}
	}
	*bp = ents[:0]
	listedPages.Put(bp)
}

func (x *exchange) getEntityListed(ctx context.Context, lb listingBackend, res wire.Resource, sel []string) error {
	pp, _ := listedProperties.Get().(*[]api.Property)
	if pp == nil {
		pp = new([]api.Property)
	}
	e, err := lb.GetEntityListed(ctx, res.Table, res.PartitionKey, res.RowKey, sel, *pp)
	defer func() {
		clear((*pp)[:cap(*pp)]) // do not hold the store's bytes from the pool
		if ps := e.Properties[:cap(e.Properties)]; err == nil && len(ps) <= maxPooledProperties {
			clear(ps)
			*pp = ps[:0]
		}
		listedProperties.Put(pp)
	}()
	if err != nil {
		return err
	}
	if e.ETag != "" {
		x.setHeader(wire.KeyETag, e.ETag)
	}
	doc := x.document(res.Table, sel)
	if err = x.writeRendered(http.StatusOK, func(b []byte) ([]byte, error) { return wire.AppendListedEntity(b, &e, doc) }); err != nil {
		x.w.Header().Del(wire.KeyETag)
		return err
	}
	return nil
}

// listedWriter is a backend that takes the entity of an insert or an update with its
// properties listed in name order, as wire.DecodeRequestEntityListed gives them, and hands
// the inserted entity out listed in a buffer the caller owns (reference.Service): the server
// decodes a write without a map. Each method answers as its mapped counterpart does
// (InsertEntity, UpdateEntity): the same outcome, answer and errors. A backend keeps
// nothing of the entity it is given once the call returns.
type listedWriter interface {
	InsertEntityListed(ctx context.Context, table string, e *api.ListedEntity, props []api.Property) (api.ListedEntity, error)
	UpdateEntityListed(ctx context.Context, table string, e *api.ListedEntity, mode api.UpdateMode, ifMatch string) (string, error)
}

// writeLists are the buffers of a listed write: the properties sent and those of the entity
// stored. A request takes one from writeListPool and hands it back emptied
// (releaseWriteLists) once its answer is written.
type writeLists struct{ sent, stored []api.Property }

var writeListPool = sync.Pool{New: func() any { return new(writeLists) }}

// releaseWriteLists empties the lists of l, whose arrays were last used by sent and stored,
// keeping arrays of at most maxPooledProperties, and hands l back.
func releaseWriteLists(l *writeLists, sent, stored []api.Property) {
	l.sent, l.stored = emptied(l.sent, sent), emptied(l.stored, stored)
	writeListPool.Put(l)
}

// emptied clears what a list wrote of the array pooled or of a larger one used it grew into
// (only used's length, by the contracts of wire.DecodeRequestEntityListed and
// Record.ListedInto, and all of pooled's array when it was outgrown), so that neither holds a
// request's or an entity's text, and returns the larger empty, or nil when it is larger than
// the pool keeps.
func emptied(pooled, used []api.Property) []api.Property {
	if cap(used) != cap(pooled) {
		clear(pooled[:cap(pooled)])
	}
	clear(used)
	if cap(used) < cap(pooled) {
		used = pooled
	}
	if cap(used) > maxPooledProperties {
		return nil
	}
	return used[:0]
}

func (x *exchange) insertEntityListed(lw listedWriter, table string) error {
	lists := writeListPool.Get().(*writeLists)
	var e, stored api.ListedEntity
	defer func() { releaseWriteLists(lists, e.Properties, stored.Properties) }()
	if err := x.decodeBody(func(body []byte) (err error) {
		e, err = wire.DecodeRequestEntityListed(body, lists.sent)
		return err
	}); err != nil {
		return err
	}
	if err := x.admitInsert(table, e.Absent, e.PartitionKey, e.RowKey); err != nil {
		return err
	}
	ctx, err := x.context()
	if err != nil {
		return err
	}
	defer ctx.cancel()
	stored, err = lw.InsertEntityListed(ctx, table, &e, lists.stored)
	if err != nil {
		return err
	}
	return x.answerInserted(table, stored.PartitionKey, stored.RowKey, stored.ETag, func(b []byte, doc wire.Document) ([]byte, error) {
		return wire.AppendListedEntity(b, &stored, doc)
	})
}

func (x *exchange) updateEntityListed(lw listedWriter, res wire.Resource, mode api.UpdateMode, ifMatch string) error {
	lists := writeListPool.Get().(*writeLists)
	var e api.ListedEntity
	defer func() { releaseWriteLists(lists, e.Properties, nil) }()
	if err := x.decodeBody(func(body []byte) (err error) {
		e, err = wire.DecodeRequestEntityListed(body, lists.sent)
		return err
	}); err != nil {
		return err
	}
	// The keys of the URL win over any in the body, as in entityFromBody.
	e.PartitionKey, e.RowKey = res.PartitionKey, res.RowKey
	e.Absent &^= api.AbsentPartitionKey | api.AbsentRowKey
	ctx, err := x.context()
	if err != nil {
		return err
	}
	defer ctx.cancel()
	etag, err := lw.UpdateEntityListed(ctx, res.Table, &e, mode, ifMatch)
	if err != nil {
		return err
	}
	x.answerUpdated(etag)
	return nil
}

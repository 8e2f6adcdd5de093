/* Progress lines; see progress.h. */
#include "progress.h"

#include <stdarg.h>
#include <unistd.h>

void progress_init(struct progress *p, FILE *out)
{
	p->out = out;
	p->tty = out && isatty(fileno(out));
	p->active = 0;
}

void progress_update(struct progress *p, const char *fmt, ...)
{
	va_list ap;
	if (!p->out)
		return;
	va_start(ap, fmt);
	if (p->tty)
		fputs("\r\033[K", p->out);
	vfprintf(p->out, fmt, ap);
	va_end(ap);
	if (p->tty) {
		p->active = 1;
	} else {
		fputc('\n', p->out);
	}
	fflush(p->out);
}

void progress_end(struct progress *p)
{
	if (p->out && p->tty && p->active) {
		fputc('\n', p->out);
		fflush(p->out);
	}
	p->active = 0;
}

/* The run's options record (store/run_options.h), parsed. */
#include "store/run_options.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "plan/plan.h"
#include "plan/platform.h"
#include "plan/schedule.h"

int store_run_options_parse(const char *json, struct store_run_options *o)
{
	memset(o, 0, sizeof(*o));
	struct json_object *j = json ? json_tokener_parse(json) : NULL, *v;
	if (!j || !json_object_is_type(j, json_type_object)) {
		json_object_put(j);
		return -EINVAL;
	}
	o->platform = NULL;
	if (json_object_object_get_ex(j, "platform", &v) && json_object_is_type(v, json_type_string))
		o->platform = plan_platform_find(json_object_get_string(v));
	if (json_object_object_get_ex(j, "fs_map", &v) && json_object_is_type(v, json_type_string))
		o->fs_map = xstrdup(json_object_get_string(v));
	if (json_object_object_get_ex(j, "vars", &v) && json_object_is_type(v, json_type_array)) {
		size_t n = json_object_array_length(v);
		o->vars = xcalloc(n + 1, sizeof(char *));
		for (size_t i = 0; i < n; i++) {
			struct json_object *it = json_object_array_get_idx(v, i);
			if (json_object_is_type(it, json_type_string))
				o->vars[o->nvars++] = xstrdup(json_object_get_string(it));
		}
	}
	if (json_object_object_get_ex(j, "image_size", &v))
		o->image_size = (uint64_t)json_object_get_int64(v);
	if (json_object_object_get_ex(j, "allow", &v))
		o->allow = (unsigned)json_object_get_int64(v);
	if (json_object_object_get_ex(j, "force", &v))
		o->force = json_object_get_boolean(v);
	if (json_object_object_get_ex(j, "no_fit_check", &v))
		o->no_fit_check = json_object_get_boolean(v);
	if (json_object_object_get_ex(j, "cwd", &v) && json_object_is_type(v, json_type_string))
		o->cwd = xstrdup(json_object_get_string(v));
	/* Runs recorded before the key drew each layout's workload apart. */
	o->seeds = SEED_LAYOUT;
	if (json_object_object_get_ex(j, "seeds", &v) && json_object_is_type(v, json_type_int))
		o->seeds = (unsigned)json_object_get_int64(v);
	json_object_put(j);
	return 0;
}

void store_run_options_release(struct store_run_options *o)
{
	free(o->fs_map);
	for (size_t i = 0; i < o->nvars; i++)
		free(o->vars[i]);
	free(o->vars);
	free(o->cwd);
	memset(o, 0, sizeof(*o));
}

void store_run_options_json(const struct store_run_options *o, struct strbuf *j)
{
	char cwd[4096];
	sb_adds(j, "{\"platform\":");
	sb_add_json(j, plan_platform_name(o->platform));
	sb_adds(j, ",\"fs_map\":");
	if (o->fs_map)
		sb_add_json(j, o->fs_map);
	else
		sb_adds(j, "null");
	/* --var NAME=VALUE as given: the plan's $variables on this host. */
	sb_adds(j, ",\"vars\":[");
	for (size_t i = 0; i < o->nvars; i++) {
		if (i)
			sb_addch(j, ',');
		sb_add_json(j, o->vars[i]);
	}
	sb_addch(j, ']');
	sb_addf(j, ",\"image_size\":%llu,\"allow\":%u,\"force\":%s,\"no_fit_check\":%s,"
		"\"seeds\":%u,\"cwd\":", (unsigned long long)o->image_size, o->allow,
		o->force ? "true" : "false", o->no_fit_check ? "true" : "false", o->seeds);
	if (o->cwd)
		sb_add_json(j, o->cwd);
	else if (getcwd(cwd, sizeof(cwd)))
		sb_add_json(j, cwd);
	else
		sb_adds(j, "null");
	sb_addch(j, '}');
}

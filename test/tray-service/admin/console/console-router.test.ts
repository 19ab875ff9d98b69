import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { useTrayStorage } from '../../../support/use-tray-storage.ts';
import { ADMIN_TOKEN, adminApp } from '../admin-fixtures.ts';

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

/** Relative module specifiers a browser module imports (static `import ... from './x.js'`). */
const importsOf = (source: string) =>
  [...source.matchAll(/^import\s[^'"]*['"](\.\/[^'"]+)['"]/gm)].map((match) => match[1] ?? '');

describe('GET /admin/console (the events console page and its assets)', () => {
  const suite = useTrayStorage();
  let app: Express;
  let close: () => void;

  before(() => {
    ({ app, close } = adminApp(suite.storage));
  });
  after(() => close?.());

  describe('the page', () => {
    it('is served to an admin with a Content-Security-Policy that allows no inline script or style', async () => {
      const res = await request(app).get('/admin/console').set(admin).expect(200);
      expect(res.type).to.equal('text/html');
      const csp = res.headers['content-security-policy'] as string;
      const directive = (name: string) =>
        csp
          .split(';')
          .map((part) => part.trim())
          .find((part) => part.startsWith(`${name} `));
      expect(directive('default-src')).to.equal("default-src 'self'");
      expect(directive('script-src')).to.equal("script-src 'self'");
      expect(directive('style-src')).to.equal("style-src 'self'");
      expect(csp).to.not.include('unsafe-inline');
      expect(csp).to.not.include('http');
      expect(res.headers['cache-control']).to.equal('no-store');
    });

    it('has no inline script, style element or style attribute, and loads nothing from another origin', async () => {
      const html = (await request(app).get('/admin/console').set(admin).expect(200)).text;
      const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
      expect(scripts).to.have.lengthOf(1);
      for (const [, attributes, body] of scripts) {
        expect(attributes).to.match(/\bsrc="\/admin\/console\/assets\/console\.js"/);
        expect(body?.trim()).to.equal('');
      }
      expect(html).to.not.match(/<style\b/i);
      expect(html).to.not.match(/\sstyle=/i);
      expect(html).to.not.match(/\son[a-z]+=/i);
      expect(html).to.not.match(/(?:src|href)="(?:https?:)?\/\//i);
    });

    it('sends a browser without a session to the sign-in form, which brings it back here', async () => {
      const res = await request(app).get('/admin/console').set('Accept', 'text/html').expect(303);
      expect(res.headers.location).to.equal('/admin/login?next=%2Fadmin%2Fconsole');
    });

    it('refuses a wrong credential as for every admin path: 401, not the page', async () => {
      const res = await request(app).get('/admin/console').set('Authorization', 'Bearer nope').expect(401);
      expect(res.text).to.not.include('<html');
    });

    it('labels every form control and marks its landmarks and views', async () => {
      const html = (await request(app).get('/admin/console').set(admin).expect(200)).text;
      const ids = [...html.matchAll(/<(?:input|select|textarea)\b[^>]*\bid="([^"]+)"/g)].map((m) => m[1]);
      expect(ids.length).to.be.greaterThan(10);
      for (const id of ids) expect(html, `label for #${id}`).to.match(new RegExp(`<label[^>]*for="${id}"`));
      expect(html).to.include('<main').and.include('<nav').and.include('<header');
      expect(html.match(/role="tab"/g)).to.have.lengthOf(4);
      expect(html.match(/role="tabpanel"/g)).to.have.lengthOf(4);
    });
  });

  describe('the assets', () => {
    it('serves every module the page loads, and every module those import, to anyone (they hold no data)', async () => {
      const seen = new Set<string>();
      const queue = ['console.js'];
      while (queue.length > 0) {
        const name = queue.shift() ?? '';
        if (seen.has(name)) continue;
        seen.add(name);
        const res = await request(app).get(`/admin/console/assets/${name}`).expect(200);
        expect(res.type, name).to.equal('text/javascript');
        queue.push(...importsOf(res.text).map((specifier) => specifier.slice(2)));
      }
      expect([...seen]).to.include.members(['console.js', 'api.js', 'events-view.js', 'uPlot.esm.js']);
    });

    it('serves the style sheets and uPlot from the installed package', async () => {
      const css = await request(app).get('/admin/console/assets/console.css').expect(200);
      expect(css.type).to.equal('text/css');
      const uplot = await request(app).get('/admin/console/assets/uPlot.min.css').expect(200);
      expect(uplot.text).to.include('.uplot');
      const esm = await request(app).get('/admin/console/assets/uPlot.esm.js').expect(200);
      expect(esm.text).to.include('export { uPlot as default }');
    });

    it('answers 404 for any other name, a path outside the assets included', async () => {
      for (const name of [
        'nope.js',
        '..%2Fconsole-page.ts',
        '..%2F..%2Fcreate-admin-app.ts',
        'console.html',
      ]) {
        await request(app).get(`/admin/console/assets/${name}`).expect(404);
      }
    });

    it('answers 400 for a name whose percent-encoding does not decode, as for any malformed URL', async () => {
      const res = await request(app).get('/admin/console/assets/%E0%A4%A').expect(400);
      expect(res.body).to.deep.equal({ status: 'error', code: 400000, message: 'malformed URL encoding' });
    });
  });
});

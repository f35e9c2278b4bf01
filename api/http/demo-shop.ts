import Router from '@koa/router';
import type Koa from 'koa';

/**
 * The demo tenant's site: a small shop with the elements `friction demo` reports friction on (`#pay-now`,
 * `form#signup`'s disabled submit, `.product-card img`, `.hero h1`), served by the api role under DEMO_SHOP_PATH.
 * Page screenshots and heatmaps work out of the box on it: the screenshot capturer renders these pages from this
 * module instead of fetching them (see `demoShopPage`), so no outbound policy has to let it reach the service itself.
 */
export const DEMO_SHOP_PATH = '/demo-shop';

const PAGES: Record<string, { title: string; body: string }> = {
  '/': {
    title: 'Home',
    body: '<section class="hero"><h1>Welcome to the demo shop</h1><p>Everyday things, delivered tomorrow.</p><a class="button" href="products">Browse products</a></section>',
  },
  '/products': {
    title: 'Products',
    body: `<h1>Products</h1><div class="grid">${['Mug', 'Lamp', 'Chair', 'Plant', 'Clock', 'Vase'].map((p, i) => `<div class="product-card"><img alt="${p}" src="data:image/svg+xml,${encodeURIComponent(`<svg xmlns='http://www.w3.org/2000/svg' width='220' height='140'><rect width='220' height='140' fill='hsl(${i * 55},45%,80%)'/><text x='110' y='78' font-size='20' text-anchor='middle' font-family='sans-serif'>${p}</text></svg>`)}"><h3>${p}</h3><p>${19 + i * 7}.00 €</p><button>Add to cart</button></div>`).join('')}</div>`,
  },
  '/cart': {
    title: 'Cart',
    body: '<h1>Your cart</h1><table><tr><td>Mug</td><td>19.00 €</td></tr><tr><td>Lamp</td><td>26.00 €</td></tr><tr><th>Total</th><th>45.00 €</th></tr></table><a class="button" href="checkout">Checkout</a>',
  },
  '/checkout': {
    title: 'Checkout',
    body: '<h1>Checkout</h1><form id="checkout"><label>Card number <input autocomplete="off" placeholder="4242 4242 4242 4242"></label><label>Expiry <input placeholder="MM/YY"></label><label>Coupon <input id="coupon"></label><button type="button" id="pay-now">Pay now</button></form>',
  },
  '/signup': {
    title: 'Sign up',
    body: '<h1>Create your account</h1><form id="signup"><label>Email <input type="email"></label><label>Password <input type="password"></label><button type="submit" disabled>Create account</button></form>',
  },
  '/blog': {
    title: 'Blog',
    body: '<section class="hero"><h1>Welcome</h1></section><article><h2>How we pack your order</h2><p>Every parcel is packed by hand in recycled paper.</p></article>',
  },
};

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#222;background:#fafafa}header{background:#312e81;color:#fff;padding:12px 32px;display:flex;gap:24px}header a{color:#fff;text-decoration:none}main{max-width:960px;margin:32px auto;padding:0 32px}.hero{padding:48px;background:#e0e7ff;border-radius:8px}.grid{display:grid;grid-template-columns:repeat(3,1fr);gap:16px}.product-card{background:#fff;padding:12px;border-radius:8px;box-shadow:0 1px 3px #0002}.product-card img{width:100%}form{display:grid;gap:12px;max-width:420px}input{display:block;width:100%;padding:8px}button,.button{padding:10px 18px;background:#4f46e5;color:#fff;border:0;border-radius:6px;text-decoration:none;display:inline-block}button[disabled]{background:#a5b4fc}table{border-collapse:collapse;margin-bottom:16px}td,th{padding:6px 16px;border-bottom:1px solid #ddd;text-align:left}';

/** The HTML of a demo page (`/checkout`), or undefined for a page the shop does not have. */
export function demoShopPage(page: string): string | undefined {
  const p = PAGES[page === '' ? '/' : page];
  if (!p) return undefined;
  const nav = Object.entries(PAGES)
    .filter(([path]) => path !== '/cart')
    .map(([path, q]) => `<a href="${DEMO_SHOP_PATH}${path === '/' ? '/' : path}">${q.title}</a>`)
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${p.title} · Demo shop</title><link rel="icon" href="data:,"><style>${STYLE}</style></head><body><header><strong>Demo shop</strong>${nav}</header><main>${p.body}</main></body></html>`;
}

/**
 * The page a capture URL shows when it is the demo shop of this service: its path under DEMO_SHOP_PATH on a
 * loopback host or on the service's public origin. Rendering it from here instead of fetching it is what lets a
 * default install (outbound guard on) capture its own demo; any other URL is fetched, guarded, as usual.
 */
export function ownDemoShopPage(url: string, publicBaseUrl: string | undefined): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);
  const ours = publicBaseUrl !== undefined && new URL(publicBaseUrl).origin === u.origin;
  if (!(loopback || ours) || (u.pathname !== DEMO_SHOP_PATH && !u.pathname.startsWith(`${DEMO_SHOP_PATH}/`)))
    return undefined;
  return demoShopPage(u.pathname.slice(DEMO_SHOP_PATH.length).replace(/\/+$/, '') || '/');
}

/** `GET /demo-shop/…`: the demo pages, public (the demo tenant's site; nothing in them is private). */
export function demoShopRouter(): Router {
  const router = new Router();
  const serve: Koa.Middleware = (ctx, next) => {
    const html = demoShopPage(ctx.path.slice(DEMO_SHOP_PATH.length).replace(/\/+$/, '') || '/');
    if (html === undefined) return next();
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; img-src data:");
    ctx.body = html;
  };
  router.get(DEMO_SHOP_PATH, serve);
  router.get(`${DEMO_SHOP_PATH}/:page`, serve);
  return router;
}
